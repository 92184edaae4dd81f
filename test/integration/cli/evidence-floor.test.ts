// Issue 7: "--grace 0s --election-timeout 0s removed the leader after one probe". An election
// timeout below 100 ms is refused at every edge, and even with no grace window the evidence rule
// takes two samples one election timeout apart before a leader is removed without a move.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLab, type Lab } from '../../../infra/lab/lab.ts';
import { jsonOf, runCli } from './support.ts';

const endpoints = ['--endpoints', 'http://127.0.0.1:2379'];

describe.concurrent('an election timeout below 100 ms', () => {
  it.each([
    ['probe', ...endpoints, '--election-timeout', '0s'],
    ['plan', ...endpoints, '--target', 'etcd1', '--grace', '0s', '--election-timeout', '50ms'],
    ['remediate', ...endpoints, '--target', 'etcd1', '--grace', '0s', '--election-timeout', '0s'],
  ])('%s … is a usage error naming the flag', async (...args) => {
    const run = await runCli(args);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      "etcd-remediator: --election-timeout: must be at least 100ms (etcd's default is 1s): evidence samples must be one election timeout apart\n",
    );
  });

  it('in the run config is refused naming the field', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-election-timeout-'));
    try {
      const file = path.join(dir, 'config.json');
      fs.writeFileSync(
        file,
        JSON.stringify({ state: 's.sqlite', clusters: [{ clusterId: 'a', endpoints: ['http://127.0.0.1:2379'], policy: { electionTimeout: '10ms' } }] }),
      );
      const run = await runCli(['run', '--config', file]);
      expect(run.code).toBe(2);
      expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(run.stderr).toContain('clusters[0].policy.electionTimeout: must be at least 100ms');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

interface ResultJson {
  outcome: string;
  reason: string;
  leaderMove: string;
  evidence: { judgement?: { verdict: string; since?: number } };
}

describe('remediate --grace 0s on a lab', () => {
  let lab: Lab;
  let dir: string;
  beforeAll(async () => {
    lab = await startLab({ members: 3, electionTimeoutMs: 500 });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-grace-0-'));
  });
  afterAll(async () => {
    await lab?.down();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('removes a cut leader only after a second sample one election timeout after the first', async () => {
    const leader = await lab.leader();
    await lab.fault(leader.name, 'cut');
    const args = [
      '--endpoints',
      lab.endpoints().join(','),
      '--target',
      leader.name,
      '--grace',
      '0s',
      '--election-timeout',
      '500ms',
      '--timeout',
      '1s',
      '--backoff',
      '300ms',
    ];
    const run = await runCli(['remediate', ...args, '--state', path.join(dir, 'state.sqlite'), '--json'], { timeoutMs: 45_000 });
    expect(run.code, run.stderr).toBe(6);
    const result = jsonOf<ResultJson>(run);
    expect(result).toMatchObject({ outcome: 'awaiting-replacement', reason: 'LEADER_UNREACHABLE_PAST_GRACE', leaderMove: 'skipped' });
    expect(result.evidence.judgement?.verdict).toBe('LEADER_UNREACHABLE');
    // The first probe that saw it down was not enough: a retry one election timeout later came first.
    expect(run.stderr).toMatch(/RetryRequested\s+LEADER_UNREACHABLE_UNCONFIRMED[\s\S]*RemediationApproved\s+LEADER_UNREACHABLE_PAST_GRACE/);
    const approved =
      /RemediationApproved\s+LEADER_UNREACHABLE_PAST_GRACE.* for (\d+) ms|RemediationApproved\s+LEADER_UNREACHABLE_PAST_GRACE.* for ([\d.]+) s/.exec(
        run.stderr,
      );
    const downFor = approved?.[1] !== undefined ? Number(approved[1]) : Number(approved?.[2]) * 1_000;
    expect(downFor, run.stderr).toBeGreaterThanOrEqual(500);
  });
});
