// snapshotBeforeRemove with a snapshot store that cannot take the snapshot: nothing is removed
// while it fails, every retry says SNAPSHOT_FAILED, and the incident ends by its budget; once the
// store works again, the snapshot is taken and the member removed exactly once.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { markerOf } from '../../../functions/core/journal.ts';
import { startLab } from '../../../infra/lab/lab.ts';
import { labPerTest, reasonsOf, startPipeline } from './pipeline.ts';

/**
 * A directory nobody may create files in, root included (these tests may run as root, for whom a
 * chmod changes nothing). The snapshot directory is a symlink to it, so a test can point it at a
 * real directory later without knowing the snapshot's file name.
 */
const UNWRITABLE_DIR = '/sys';

describe.sequential('snapshot before removal fails', () => {
  const t = labPerTest();
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });

  const tempDir = (): string => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'snapshot-failed-'));
    dirs.push(dir);
    return dir;
  };

  const journalOf = async (pipeline: NonNullable<typeof t.pipeline>) => {
    const [incident] = await pipeline.runtime.store.listIncidents();
    return pipeline.runtime.store.journal(incident!.incidentId);
  };

  it('an unwritable snapshot directory: SNAPSHOT_FAILED on every attempt, nothing removed, blocked by the attempt budget', async () => {
    const lab = (t.lab = await startLab({ members: 3 }));
    const leader = await lab.leader();
    const follower = lab.members.find((m) => m.id !== leader.id)!;
    const snapshotDir = path.join(tempDir(), 'snapshots');
    fs.symlinkSync(UNWRITABLE_DIR, snapshotDir);
    const pipeline = (t.pipeline = await startPipeline(lab, {
      snapshotDir,
      policy: { snapshotBeforeRemove: true, maxAttempts: 3 },
    }));
    // What had been sent to etcd each time a retry was asked for.
    const removalsAtRetry: number[] = [];
    pipeline.runtime.bus.subscribe((e) => {
      if (e.detailType === 'RetryRequested') removalsAtRetry.push(pipeline.calls.memberRemove.length);
    });

    const outcome = await pipeline.remediate(follower.name);

    expect(outcome.detailType, JSON.stringify(outcome.detail).slice(0, 1500)).toBe('RemediationBlocked');
    expect((outcome.detail as { reason: string }).reason).toBe('ATTEMPTS_EXHAUSTED');
    const retries = pipeline.events.filter((e) => e.detailType === 'RetryRequested');
    expect(reasonsOf(pipeline.events, 'RetryRequested')).toEqual(['SNAPSHOT_FAILED', 'SNAPSHOT_FAILED', 'SNAPSHOT_FAILED']);
    for (const retry of retries) {
      const { message } = retry.detail as { message: string };
      expect(message).toContain(follower.name);
      expect(message).toContain('nothing was removed');
      // The store's own error is named, so a person knows what to fix.
      expect(message).toMatch(/EACCES|permission denied|EROFS|read-only/i);
    }
    // Every approval reached remediate, and no MemberRemove was ever sent.
    expect(reasonsOf(pipeline.events, 'RemediationApproved')).toEqual(['TARGET_IS_FOLLOWER', 'TARGET_IS_FOLLOWER', 'TARGET_IS_FOLLOWER']);
    expect(removalsAtRetry).toEqual([0, 0, 0]);
    expect(pipeline.calls.memberRemove).toEqual([]);
    expect(pipeline.calls.moveLeader).toEqual([]);
    const steps = (await journalOf(pipeline)).filter((e) => e.isStepMarker).map((e) => e.step);
    expect(steps).not.toContain('snapshot-taken');
    expect(steps).not.toContain('member-removed');
    expect((await lab.memberList()).map((m) => m.id).sort()).toEqual(lab.members.map((m) => m.id).sort());
    expect((await lab.leader()).id).toBe(leader.id);
  });

  it('the snapshot fails once, then succeeds: one SNAPSHOT_FAILED retry, then the snapshot, then exactly one removal', async () => {
    const lab = (t.lab = await startLab({ members: 3 }));
    const leader = await lab.leader();
    const follower = lab.members.find((m) => m.id !== leader.id)!;
    const root = tempDir();
    const snapshotDir = path.join(root, 'snapshots');
    const writable = path.join(root, 'writable');
    fs.mkdirSync(writable);
    fs.symlinkSync(UNWRITABLE_DIR, snapshotDir);
    // The lab's attempt budget: etcd's "unhealthy cluster" refusals in its first seconds spend attempts.
    const pipeline = (t.pipeline = await startPipeline(lab, { snapshotDir, policy: { snapshotBeforeRemove: true } }));
    const removalsAtRetry: number[] = [];
    pipeline.runtime.bus.subscribe((e) => {
      if (e.detailType !== 'RetryRequested') return;
      removalsAtRetry.push(pipeline.calls.memberRemove.length);
      // Observers run before any handler sees the event: the next attempt finds a writable store.
      if ((e.detail as { reason: string }).reason === 'SNAPSHOT_FAILED') {
        fs.rmSync(snapshotDir);
        fs.symlinkSync(writable, snapshotDir);
      }
    });

    const outcome = await pipeline.remediate(follower.name);

    expect(outcome.detailType, JSON.stringify(outcome.detail).slice(0, 1500)).toBe('RemediationCompleted');
    // etcd may refuse the removal itself for its first seconds ("unhealthy cluster"); those retries
    // come after the snapshot and are not SNAPSHOT_FAILED.
    const reasons = reasonsOf(pipeline.events, 'RetryRequested');
    expect(reasons[0]).toBe('SNAPSHOT_FAILED');
    expect(reasons.filter((r) => r === 'SNAPSHOT_FAILED')).toHaveLength(1);
    expect(removalsAtRetry[0]).toBe(0);
    expect(pipeline.calls.removed).toEqual([follower.id]);
    expect(new Set(pipeline.calls.memberRemove)).toEqual(new Set([follower.id]));

    const journal = await journalOf(pipeline);
    const steps = journal.filter((e) => e.isStepMarker).map((e) => e.step);
    expect(steps.indexOf('snapshot-taken')).toBeGreaterThan(-1);
    expect(steps.indexOf('snapshot-taken')).toBeLessThan(steps.indexOf('member-removed'));
    const file = markerOf(journal, 'snapshot-taken')!.detail.location;
    expect(path.dirname(file)).toBe(snapshotDir);
    // One whole snapshot in the writable directory, nothing else.
    const written = fs.readdirSync(writable);
    expect(written).toEqual([path.basename(file)]);
    expect(fs.statSync(path.join(writable, written[0]!)).size).toBeGreaterThan(0);
    expect((await lab.memberList()).map((m) => m.id).sort()).toEqual(lab.members.filter((m) => m.id !== follower.id).map((m) => m.id).sort());
  });

  it('a snapshot directory under a regular file: SNAPSHOT_FAILED naming the store, nothing removed, blocked by the budget', async () => {
    // The store fails to open (its mkdir throws) rather than the write failing: that too is a
    // snapshot that could not be taken, said as such, and never a removal without one.
    const lab = (t.lab = await startLab({ members: 3 }));
    const leader = await lab.leader();
    const follower = lab.members.find((m) => m.id !== leader.id)!;
    const root = tempDir();
    fs.writeFileSync(path.join(root, 'a-file'), 'not a directory');
    const pipeline = (t.pipeline = await startPipeline(lab, {
      snapshotDir: path.join(root, 'a-file', 'snapshots'),
      policy: { snapshotBeforeRemove: true, maxAttempts: 3 },
    }));

    const outcome = await pipeline.remediate(follower.name);

    expect(outcome.detailType, JSON.stringify(outcome.detail).slice(0, 1500)).toBe('RemediationBlocked');
    expect((outcome.detail as { reason: string }).reason).toBe('ATTEMPTS_EXHAUSTED');
    const retries = pipeline.events.filter((e) => e.detailType === 'RetryRequested').map((e) => e.detail as { reason: string; message: string });
    expect(retries.length).toBeGreaterThan(0);
    for (const retry of retries) {
      expect(retry.reason).toBe('SNAPSHOT_FAILED');
      expect(retry.message).toMatch(/the snapshot store cannot take .*ENOTDIR.*; nothing was removed/);
    }
    expect(pipeline.calls.memberRemove).toEqual([]);
    const steps = (await journalOf(pipeline)).filter((e) => e.isStepMarker).map((e) => e.step);
    expect(steps).not.toContain('snapshot-taken');
    expect(steps).not.toContain('member-removed');
    expect((await lab.memberList()).map((m) => m.id).sort()).toEqual(lab.members.map((m) => m.id).sort());
  });
});
