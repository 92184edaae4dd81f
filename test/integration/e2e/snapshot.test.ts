// With snapshotBeforeRemove, a snapshot etcd itself can read is taken before the member goes.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { markerOf } from '../../../functions/core/journal.ts';
import { startLab } from '../../../infra/lab/lab.ts';
import { labPerTest, startPipeline } from './pipeline.ts';

const run = promisify(execFile);

describe('snapshot before removal', () => {
  const t = labPerTest();

  it('takes a valid snapshot through a healthy member, then removes the target', async () => {
    const lab = (t.lab = await startLab({ members: 3 }));
    const leader = await lab.leader();
    const follower = lab.members.find((m) => m.id !== leader.id)!;
    const pipeline = (t.pipeline = await startPipeline(lab, { policy: { snapshotBeforeRemove: true } }));

    const outcome = await pipeline.remediate(follower.name);

    expect(outcome.detailType).toBe('RemediationCompleted');
    const [incident] = await pipeline.runtime.store.listIncidents();
    const journal = await pipeline.runtime.store.journal(incident!.incidentId);
    const markers = journal.filter((e) => e.isStepMarker).map((e) => e.step);
    expect(markers.indexOf('snapshot-taken')).toBeGreaterThan(-1);
    expect(markers.indexOf('snapshot-taken')).toBeLessThan(markers.indexOf('member-removed'));
    const file = markerOf(journal, 'snapshot-taken')!.detail.location;
    expect(fs.statSync(file).size).toBeGreaterThan(0);
    // etcd's own tool must accept it as a snapshot.
    const { stdout } = await run(process.env.ETCDCTL_BIN ?? 'etcdctl', ['snapshot', 'status', file, '-w', 'json'], {
      env: { ...process.env, ETCDCTL_API: '3' },
    });
    expect(JSON.parse(stdout)).toMatchObject({ totalKey: expect.any(Number), revision: expect.any(Number) });
  });
});
