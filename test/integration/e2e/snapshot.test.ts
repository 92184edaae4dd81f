// A snapshot before every removal, by default: etcd's own tool accepts the file, and its size and
// SHA-256 are the ones the journal and RemediationCompleted record. A policy that does not require
// one removes the member even when the snapshot fails, and the journal says it failed.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import type { DetailOf } from '../../../events/catalogue.ts';
import { isLine, markerOf } from '../../../functions/core/incident/journal.ts';
import { startLab } from '../../../infra/lab/lab.ts';
import { labPerTest, startPipeline } from './pipeline.ts';

const run = promisify(execFile);

/** `snapshot status` by etcdutl where it sits beside etcdctl (3.5 on), else by etcdctl (3.4). */
async function snapshotStatus(file: string): Promise<unknown> {
  const etcdctl = process.env.ETCDCTL_BIN ?? 'etcdctl';
  const etcdutl = path.join(path.dirname(etcdctl), 'etcdutl');
  const [bin, env] = fs.existsSync(etcdutl) ? [etcdutl, process.env] : [etcdctl, { ...process.env, ETCDCTL_API: '3' }];
  const { stdout } = await run(bin, ['snapshot', 'status', file, '-w', 'json'], { env });
  return JSON.parse(stdout);
}

const modeOf = (file: string): number => fs.statSync(file).mode & 0o777;

describe('snapshot before removal', () => {
  const t = labPerTest();
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('by default: a snapshot etcd accepts, beside the state file, its size and SHA-256 recorded, then the removal', async () => {
    const lab = (t.lab = await startLab({ members: 3 }));
    const leader = await lab.leader();
    const follower = lab.members.find((m) => m.id !== leader.id)!;
    const pipeline = (t.pipeline = await startPipeline(lab));

    const outcome = await pipeline.remediate(follower.name);

    expect(outcome.detailType, JSON.stringify(outcome.detail).slice(0, 1500)).toBe('RemediationCompleted');
    const [incident] = await pipeline.runtime.store.listIncidents();
    const journal = await pipeline.runtime.store.journal(incident!.incidentId);
    const markers = journal.filter((e) => e.isStepMarker).map((e) => e.step);
    expect(markers.indexOf('snapshot-taken')).toBeGreaterThan(-1);
    expect(markers.indexOf('snapshot-taken')).toBeLessThan(markers.indexOf('member-removed'));
    const taken = markerOf(journal, 'snapshot-taken')!.detail;

    // Where: <state dir>/snapshots/<cluster>/, only its owner may read or list it.
    const snapshots = path.join(path.dirname(pipeline.statePath), 'snapshots');
    expect(path.dirname(taken.location)).toBe(path.join(snapshots, 'lab'));
    expect(modeOf(snapshots)).toBe(0o700);
    expect(modeOf(path.dirname(taken.location))).toBe(0o700);
    expect(modeOf(taken.location)).toBe(0o600);
    expect(fs.readdirSync(path.dirname(taken.location))).toEqual([path.basename(taken.location)]);

    // What: the bytes on disk are the ones counted and hashed as they streamed.
    const bytes = fs.readFileSync(taken.location);
    expect(taken.bytes).toBe(bytes.length);
    expect(taken.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
    expect(taken.via).toMatch(/ over direct$/);
    expect(taken.via).not.toContain(follower.name);
    expect(await snapshotStatus(taken.location)).toMatchObject({ totalKey: expect.any(Number), revision: expect.any(Number), totalSize: expect.any(Number) });

    // The ending says it too.
    const detail = outcome.detail as DetailOf<'RemediationCompleted'>;
    expect(detail.snapshot).toEqual({ location: taken.location, bytes: taken.bytes, sha256: taken.sha256, via: taken.via, tookMs: taken.tookMs });
    expect(detail.timeline.find((l) => l.step === 'snapshot-taken')?.detail).toContain(`${bytes.length} bytes, sha256 ${taken.sha256}`);
    expect((await lab.memberList()).map((m) => m.id)).not.toContain(follower.id);
  });

  it('snapshotRequired false: the snapshot fails, the journal says so on a line of its own, and the member is removed', async () => {
    const lab = (t.lab = await startLab({ members: 3 }));
    const leader = await lab.leader();
    const follower = lab.members.find((m) => m.id !== leader.id)!;
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'snapshot-optional-'));
    dirs.push(root);
    fs.writeFileSync(path.join(root, 'a-file'), 'not a directory');
    const pipeline = (t.pipeline = await startPipeline(lab, { snapshotDir: path.join(root, 'a-file', 'snapshots'), policy: { snapshotRequired: false } }));

    const outcome = await pipeline.remediate(follower.name);

    expect(outcome.detailType, JSON.stringify(outcome.detail).slice(0, 1500)).toBe('RemediationCompleted');
    expect(pipeline.calls.removed).toEqual([follower.id]);
    const [incident] = await pipeline.runtime.store.listIncidents();
    const journal = await pipeline.runtime.store.journal(incident!.incidentId);
    expect(markerOf(journal, 'snapshot-taken')).toBeUndefined();
    const failed = journal.filter((e) => isLine(e, 'snapshot-failed'));
    expect(failed.length).toBeGreaterThan(0);
    expect(failed[0]).toMatchObject({
      isStepMarker: false,
      detail: {
        required: false,
        transient: false,
        problem: expect.stringMatching(/the snapshot store directory .* refused it: cannot make the snapshot directory .* is not a directory/),
      },
    });
    expect(failed[0]!.at).toBeLessThan(markerOf(journal, 'member-removed')!.at);
    const detail = outcome.detail as DetailOf<'RemediationCompleted'>;
    expect(detail.snapshot).toEqual({ failed: expect.stringMatching(/is not a directory/) });
    expect(detail.timeline.find((l) => l.step === 'snapshot-failed')?.detail).toMatch(/does not require one, so the removal goes on without it/);
    expect((await lab.memberList()).map((m) => m.id)).not.toContain(follower.id);
  });
});
