// Issue 7, observed case 3: --endpoints naming members of two different etcd clusters. Two real
// labs on loopback; one member of cluster B first, cluster A's three after. Nothing may be judged
// or removed across them: probe, plan and remediate refuse with CLUSTER_MISMATCH, exit 2.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLab, type Lab } from '../../../infra/lab/lab.ts';
import { jsonOf, runCli } from './support.ts';

interface ResultJson {
  outcome: string;
  reason: string;
  message: string;
  evidence: { clusterIds?: string[] };
}

interface ProbeJson {
  clusterId: string | null;
  clusterIds: string[];
  identity: { endpoint: string; clusterId: string }[];
  members: unknown[];
}

describe('endpoints of two etcd clusters', () => {
  let a: Lab | undefined;
  let b: Lab | undefined;
  let dir: string;
  /** Cluster B's one member first, then cluster A's three: as observed. */
  let mixed: string;
  let idA: string;
  let idB: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-identity-'));
    a = await startLab({ members: 3, namePrefix: 'a' });
    b = await startLab({ members: 1, namePrefix: 'b' });
    mixed = [...b.endpoints(), ...a.endpoints()].join(',');
    // Ground truth from each lab's own members, through etcd's JSON gateway, not our client.
    idA = (await a.status('a1')).clusterId;
    idB = (await b.status('b1')).clusterId;
  });
  afterAll(async () => {
    try {
      await a?.down();
    } finally {
      await b?.down();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  const memberIds = async (lab: Lab | undefined) => (await lab!.memberList()).map((m) => m.id).sort();

  it('the two labs are two clusters', () => {
    expect(idA).toMatch(/^[1-9a-f][0-9a-f]*$/);
    expect(idB).toMatch(/^[1-9a-f][0-9a-f]*$/);
    expect(idA).not.toBe(idB);
  });

  it('remediate --target a1 refuses with CLUSTER_MISMATCH naming the endpoints and ids, exit 2, nothing removed in either', async () => {
    const beforeA = await memberIds(a);
    const beforeB = await memberIds(b);
    const state = path.join(dir, 'remediate.sqlite');
    const run = await runCli(
      [
        'remediate',
        '--endpoints',
        mixed,
        '--target',
        'a1',
        '--grace',
        '0s',
        '--election-timeout',
        '500ms',
        '--timeout',
        '1s',
        '--backoff',
        '300ms',
        '--state',
        state,
        '--json',
      ],
      { timeoutMs: 45_000 },
    );
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(2);
    const result = jsonOf<ResultJson>(run);
    expect(result).toMatchObject({ outcome: 'blocked', reason: 'CLUSTER_MISMATCH' });
    for (const endpoint of mixed.split(',')) expect(result.message).toContain(endpoint);
    expect(result.message).toContain(idA);
    expect(result.message).toContain(idB);
    expect(result.evidence.clusterIds?.sort()).toEqual([idA, idB].sort());
    expect(await memberIds(a)).toEqual(beforeA);
    expect(await memberIds(b)).toEqual(beforeB);
  });

  it('plan --target a1 refuses the same way, exit 2', async () => {
    const run = await runCli(['plan', '--endpoints', mixed, '--target', 'a1', '--election-timeout', '500ms', '--timeout', '1s', '--json']);
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(2);
    const result = jsonOf<ResultJson>(run);
    expect(result).toMatchObject({ outcome: 'blocked', reason: 'CLUSTER_MISMATCH' });
    expect(result.message).toContain(idA);
    expect(result.message).toContain(idB);
    expect(result.message).toContain(b!.member('b1').clientUrl);
  });

  it('probe shows both cluster ids and which endpoint answered with which, exit 2', async () => {
    const text = await runCli(['probe', '--endpoints', mixed, '--timeout', '1s']);
    expect(text.code, text.stderr).toBe(2);
    expect(text.stdout).toContain('CLUSTER_MISMATCH');
    expect(text.stdout).toContain(idA);
    expect(text.stdout).toContain(idB);

    const json = await runCli(['probe', '--endpoints', mixed, '--timeout', '1s', '--json']);
    expect(json.code, json.stderr).toBe(2);
    const probe = jsonOf<ProbeJson>(json);
    expect(probe.clusterId).toBeNull();
    expect(probe.clusterIds.sort()).toEqual([idA, idB].sort());
    const said = Object.fromEntries(probe.identity.map((r) => [r.endpoint, r.clusterId]));
    expect(said[b!.member('b1').clientUrl]).toBe(idB);
    for (const endpoint of a!.endpoints()) expect(said[endpoint]).toBe(idA);
  });

  it('probe of one cluster shows its id, exit 0', async () => {
    const text = await runCli(['probe', '--endpoints', a!.endpoints().join(','), '--timeout', '1s']);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(`cluster id: ${idA}`);
    const json = jsonOf<ProbeJson>(await runCli(['probe', '--endpoints', a!.endpoints().join(','), '--timeout', '1s', '--json']));
    expect(json.clusterId).toBe(idA);
    expect(json.clusterIds).toEqual([idA]);
  });
});
