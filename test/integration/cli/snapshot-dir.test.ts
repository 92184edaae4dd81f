// Where snapshots go, chosen at the edge: remediate --snapshot-dir and a run config's snapshotDir.
// The snapshot lands there, named by cluster and incident, with the SHA-256 the timeline says; a
// path that cannot be a directory, or cannot be written, is refused at start, exit 2, in one line
// naming the flag and the real cause.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLab, type Lab } from '../../../infra/lab/lab.ts';
import { readOnlyDir, readOnlyDirUnavailable } from '../../support/read-only-dir.ts';
import { jsonOf, runCli } from './support.ts';

describe('the snapshot directory on the command line', () => {
  let lab: Lab;
  let dir: string;
  beforeAll(async () => {
    lab = await startLab({ members: 3, electionTimeoutMs: 500 });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-snapshot-dir-'));
    fs.writeFileSync(path.join(dir, 'a-file'), 'not a directory');
  });
  afterAll(async () => {
    await lab?.down();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('remediate --snapshot-dir DIR: the snapshot is DIR/<cluster>/<incident>-<member>.db, its SHA-256 the one in the timeline', async () => {
    const leader = await lab.leader();
    const follower = lab.members.find((m) => m.id !== leader.id)!;
    const snapshots = path.join(dir, 'chosen');
    const lab500 = ['--election-timeout', '500ms', '--timeout', '1s', '--backoff', '300ms'];
    const run = await runCli(
      [
        'remediate',
        '--endpoints',
        lab.endpoints().join(','),
        '--target',
        follower.name,
        ...lab500,
        '--state',
        path.join(dir, 'state.sqlite'),
        '--snapshot-dir',
        snapshots,
        '--json',
      ],
      { timeoutMs: 45_000 },
    );
    const result = jsonOf<{ incidentId: string; timeline: { step: string; detail: string }[] }>(run);
    const file = path.join(snapshots, 'default', `${result.incidentId}-${follower.name}.db`);
    expect(fs.existsSync(file), run.stderr).toBe(true);
    const sha256 = createHash('sha256').update(fs.readFileSync(file)).digest('hex');
    expect(result.timeline.find((l) => l.step === 'snapshot-taken')?.detail).toContain(`${file} (through `);
    expect(result.timeline.find((l) => l.step === 'snapshot-taken')?.detail).toContain(`sha256 ${sha256}`);
    expect(fs.existsSync(path.join(dir, 'snapshots'))).toBe(false);
    expect((await lab.memberList()).map((m) => m.id)).not.toContain(follower.id);
  });

  it('remediate --snapshot-dir naming a regular file: exit 2, one line, nothing probed or removed', async () => {
    const before = (await lab.memberList()).map((m) => m.id).sort();
    const file = path.join(dir, 'a-file');
    const run = await runCli(['remediate', '--endpoints', lab.endpoints().join(','), '--target', lab.members[0]!.name, '--snapshot-dir', file]);
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr.trimEnd().split('\n')).toEqual([`etcd-remediator: --snapshot-dir: ${file} is not a directory`]);
    expect((await lab.memberList()).map((m) => m.id).sort()).toEqual(before);
  });

  it('run --config with snapshotDir naming a regular file: exit 2, one line naming the field', async () => {
    const config = path.join(dir, 'config.json');
    fs.writeFileSync(config, JSON.stringify({ state: 'run.sqlite', snapshotDir: 'a-file', clusters: [{ clusterId: 'lab', endpoints: lab.endpoints() }] }));
    const run = await runCli(['run', '--config', config]);
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(new RegExp(`snapshotDir: ${path.join(dir, 'a-file')} is not a directory\\n$`));
  });

  // Not `ENOENT … mkdir`, as Node's recursive mkdir would have it: the folder that cannot be written, and why.
  it.skipIf(readOnlyDirUnavailable !== undefined)(
    "--snapshot-dir under a read-only directory, and a run config's snapshotDir naming one: exit 2, one line naming the folder and the cause",
    async () => {
      const readOnly = readOnlyDir();
      try {
        const before = (await lab.memberList()).map((m) => m.id).sort();
        const under = path.join(readOnly.dir, 'snapshots');
        const run = await runCli(['remediate', '--endpoints', lab.endpoints().join(','), '--target', lab.members[0]!.name, '--snapshot-dir', under]);
        expect(run.code, run.stderr).toBe(2);
        expect(run.stderr.trimEnd().split('\n')).toEqual([`etcd-remediator: --snapshot-dir: ${under} cannot be made: ${readOnly.dir} ${readOnly.says}`]);
        expect((await lab.memberList()).map((m) => m.id).sort()).toEqual(before);

        const config = path.join(dir, 'read-only.json');
        fs.writeFileSync(
          config,
          JSON.stringify({ state: 'run-ro.sqlite', snapshotDir: readOnly.dir, clusters: [{ clusterId: 'lab', endpoints: lab.endpoints() }] }),
        );
        const service = await runCli(['run', '--config', config]);
        expect(service.code, service.stderr).toBe(2);
        expect(service.stderr.trimEnd().split('\n')).toHaveLength(1);
        expect(service.stderr).toMatch(new RegExp(`snapshotDir: ${readOnly.dir} ${readOnly.says}\\n$`));
        expect(fs.existsSync(path.join(dir, 'run-ro.sqlite'))).toBe(false);
      } finally {
        readOnly.remove();
      }
    },
  );
});
