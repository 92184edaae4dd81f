// A snapshot the policy requires (the default) that cannot be taken: the removal blocks with
// SNAPSHOT_FAILED and removes nothing. A store that refuses it blocks at once (no retry fixes a
// full disk or a path that is not a directory); etcd failing on every member is tried again a
// bounded number of times first. Each block names what was tried and what a person should do.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SNAPSHOT_TRANSIENT_RETRIES } from '../../../functions/core/removal/snapshot-steps.ts';
import { startLab, type Lab, type LabMember } from '../../../infra/lab/lab.ts';
import { labPerTest, reasonsOf, startPipeline, type Pipeline } from './pipeline.ts';

/**
 * A directory nobody may create files in, root included (these tests may run as root, for whom a
 * chmod changes nothing). The snapshot directory is a symlink to it.
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

  const journalSteps = async (pipeline: Pipeline) => {
    const [incident] = await pipeline.runtime.store.listIncidents();
    return pipeline.runtime.store.journal(incident!.incidentId);
  };

  /** The lab, its leader and a follower to remediate, and what every test checks after a block. */
  async function blockedWith(options: Parameters<typeof startPipeline>[1], before?: (lab: Lab, follower: LabMember) => Promise<void>) {
    const lab = (t.lab = await startLab({ members: 3 }));
    const leader = await lab.leader();
    const follower = lab.members.find((m) => m.id !== leader.id)!;
    await before?.(lab, follower);
    const pipeline = (t.pipeline = await startPipeline(lab, options));
    const outcome = await pipeline.remediate(follower.name);
    expect(outcome.detailType, JSON.stringify(outcome.detail).slice(0, 1500)).toBe('RemediationBlocked');
    const { reason, message } = outcome.detail as { reason: string; message: string };
    expect(reason).toBe('SNAPSHOT_FAILED');
    expect(message).toContain(`before removing ${follower.name}`);
    expect(message).toContain('nothing was removed');
    expect(message).toMatch(/set the policy's snapshotRequired to false/);
    // Nothing sent to etcd that changes it; the member list is what it was.
    expect(pipeline.calls.memberRemove).toEqual([]);
    expect(pipeline.calls.moveLeader).toEqual([]);
    const steps = (await journalSteps(pipeline)).map((e) => e.step);
    expect(steps).not.toContain('snapshot-taken');
    expect(steps).not.toContain('member-removed');
    expect((await lab.memberList()).map((m) => m.id).sort()).toEqual(lab.members.map((m) => m.id).sort());
    expect((await lab.leader()).id).toBe(leader.id);
    return { pipeline, message, leader, follower, lab };
  }

  it('an unwritable snapshot directory: blocked at once, naming the store and its error', async () => {
    const snapshotDir = path.join(tempDir(), 'snapshots');
    fs.symlinkSync(UNWRITABLE_DIR, snapshotDir);
    const { pipeline, message } = await blockedWith({ snapshotDir });
    expect(message).toMatch(new RegExp(`the snapshot store directory ${snapshotDir} refused it: .*(EACCES|EROFS|EPERM|ENOENT)`));
    expect(message).toMatch(/Fix the store \(free disk space or make the directory writable/);
    expect(reasonsOf(pipeline.events, 'RetryRequested')).not.toContain('SNAPSHOT_FAILED');
    expect((await journalSteps(pipeline)).filter((e) => e.step === 'snapshot-failed')).toHaveLength(1);
  });

  it('a snapshot directory under a regular file: blocked at once, saying the path is not a directory', async () => {
    const root = tempDir();
    fs.writeFileSync(path.join(root, 'a-file'), 'not a directory');
    const { pipeline, message } = await blockedWith({ snapshotDir: path.join(root, 'a-file', 'snapshots') });
    expect(message).toMatch(/the snapshot store directory .*a-file\/snapshots refused it: cannot make the snapshot directory .*: .*a-file is not a directory/);
    expect(reasonsOf(pipeline.events, 'RetryRequested')).not.toContain('SNAPSHOT_FAILED');
    expect(fs.readdirSync(root)).toEqual(['a-file']);
  });

  it('every healthy member fails to stream it in time: retried a bounded number of times, then blocked naming each member and path', async () => {
    // Every chunk to and from the members a snapshot may come from held 50 ms, and 20 ms to stream
    // it: every try ends at its deadline, as a member under load would, however fast the machine (a
    // bare 1 ms deadline was met by a 20 KB snapshot on an idle loopback). A deadline is a failure
    // that passes by itself: it is tried again first.
    const snapshotDir = path.join(tempDir(), 'snapshots');
    const slowOthers = async (lab: Lab, follower: LabMember) => {
      for (const member of lab.members.filter((m) => m.id !== follower.id)) await lab.fault(member.name, { delayMs: 50 });
    };
    const { pipeline, message, leader, follower, lab } = await blockedWith({ snapshotDir, policy: { snapshotTimeoutMs: 20 } }, slowOthers);
    expect(reasonsOf(pipeline.events, 'RetryRequested').filter((r) => r === 'SNAPSHOT_FAILED')).toHaveLength(SNAPSHOT_TRANSIENT_RETRIES);
    const other = lab.members.find((m) => m.id !== leader.id && m.id !== follower.id)!;
    for (const member of [leader, other]) expect(message).toMatch(new RegExp(`${member.name} \\(${member.id}\\) over direct http://\\S+ said "[^"]+"`));
    expect(message).not.toMatch(new RegExp(`${follower.name} \\(${follower.id}\\) over`));
    expect(message).toMatch(new RegExp(`after ${SNAPSHOT_TRANSIENT_RETRIES + 1} tries; blocked\\. Check the members named`));
    const failed = (await journalSteps(pipeline)).filter((e) => e.step === 'snapshot-failed');
    expect(failed).toHaveLength(SNAPSHOT_TRANSIENT_RETRIES + 1);
    // No partial is left behind, and no file was taken for a snapshot.
    expect(fs.readdirSync(path.join(snapshotDir, 'lab'))).toEqual([]);
  });
});
