// Snapshots as files: 0700 directories and 0600 files, a partial never named as a snapshot, and
// each cluster keeping only its newest few, never losing the one just taken.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fileSnapshots, newestSnapshot, SNAPSHOTS_KEPT_PER_CLUSTER, unwritableDirectory } from '../../../../functions/adapters/local/file-snapshots.ts';
import { testIncidentId } from '../../../support/incident-ids.ts';
import { etcdSnapshotBytes, streamEtcdSnapshot } from '../../../support/etcd-snapshot-bytes.ts';
import { readOnlyDir, readOnlyDirUnavailable, type ReadOnlyDir } from '../../../support/read-only-dir.ts';
import { tempDir, type TempDir } from '../../runtime/helpers.ts';

let dir: TempDir;
afterEach(() => dir?.remove());

const modeOf = (file: string): number => fs.statSync(file).mode & 0o777;

describe('file snapshots', () => {
  it('writes a partial 0600 under a 0700 directory, and names it a snapshot only once kept', async () => {
    dir = tempDir();
    const store = fileSnapshots(dir.file('snapshots'));
    expect(store.describe).toBe(`directory ${dir.file('snapshots')}`);
    const target = await store.open({ clusterId: 'prod/eu 1', incidentId: 'i-1', member: 'etcd-1' });
    const clusterDir = path.join(dir.file('snapshots'), 'prod_eu_1');
    expect(target.location).toBe(path.join(clusterDir, 'i-1-etcd-1.db'));
    expect(fs.readdirSync(clusterDir)).toEqual(['i-1-etcd-1.db.partial']);
    await streamEtcdSnapshot(target.stream, 'keys');
    expect(fs.existsSync(target.location)).toBe(false);
    await target.keep('unused');
    expect(fs.readdirSync(clusterDir)).toEqual(['i-1-etcd-1.db']);
    expect(fs.readFileSync(target.location).equals(etcdSnapshotBytes('keys'))).toBe(true);
    expect(modeOf(dir.file('snapshots'))).toBe(0o700);
    expect(modeOf(clusterDir)).toBe(0o700);
    expect(modeOf(target.location)).toBe(0o600);
  });

  it('a discarded snapshot leaves nothing; a partial a crash left is replaced', async () => {
    dir = tempDir();
    const store = fileSnapshots(dir.path);
    const subject = { clusterId: 'c1', incidentId: 'i-1', member: 'etcd-1' };
    const first = await store.open(subject);
    first.stream.write('half');
    // A crash here: the next run of the same incident starts the file afresh.
    const second = await store.open(subject);
    await streamEtcdSnapshot(second.stream, 'whole');
    await second.keep('unused');
    expect(fs.readFileSync(second.location).equals(etcdSnapshotBytes('whole'))).toBe(true);
    const third = await store.open({ ...subject, incidentId: 'i-2' });
    third.stream.write('half');
    await third.discard();
    expect(fs.readdirSync(path.join(dir.path, 'c1'))).toEqual(['i-1-etcd-1.db']);
  });

  it(`keeps the newest ${SNAPSHOTS_KEPT_PER_CLUSTER} of a cluster, the one just taken among them, and leaves other clusters alone`, async () => {
    dir = tempDir();
    const store = fileSnapshots(dir.path);
    const take = async (clusterId: string, incidentId: string, mtime: Date) => {
      const target = await store.open({ clusterId, incidentId, member: 'm' });
      await streamEtcdSnapshot(target.stream);
      // Its time set before it is kept, so the pruning sees it as this old.
      fs.utimesSync(`${target.location}.partial`, mtime, mtime);
      await target.keep('unused');
    };
    const minute = (i: number) => new Date(Date.parse('2025-01-01T00:00:00Z') + i * 60_000);
    await take('other', 'o-1', minute(-100));
    for (let i = 1; i <= 7; i++) await take('c1', `i-${i}`, minute(i));
    const c1 = () => fs.readdirSync(path.join(dir.path, 'c1')).sort();
    expect(c1()).toEqual(['i-3-m.db', 'i-4-m.db', 'i-5-m.db', 'i-6-m.db', 'i-7-m.db']);
    // The one just taken stays even when its clock makes it the oldest: the oldest other goes.
    await take('c1', 'i-0', minute(0));
    expect(c1()).toEqual(['i-0-m.db', 'i-4-m.db', 'i-5-m.db', 'i-6-m.db', 'i-7-m.db']);
    expect(fs.readdirSync(path.join(dir.path, 'other'))).toEqual(['o-1-m.db']);
  });
});

describe('where snapshots can go', () => {
  it('a writable directory, or one a writable folder can hold, has nothing to say; a file on the way is named', () => {
    dir = tempDir();
    expect(unwritableDirectory(dir.path)).toBeUndefined();
    expect(unwritableDirectory(path.join(dir.path, 'not', 'yet'))).toBeUndefined();
    fs.writeFileSync(dir.file('a-file'), '');
    expect(unwritableDirectory(path.join(dir.file('a-file'), 'below'))).toBe(`${dir.file('a-file')} is not a directory`);
  });
});

const readOnlyTitle = readOnlyDirUnavailable
  ? `file snapshots in a read-only directory (skipped: ${readOnlyDirUnavailable})`
  : 'file snapshots in a read-only directory';

describe.skipIf(readOnlyDirUnavailable !== undefined)(readOnlyTitle, () => {
  let readOnly: ReadOnlyDir | undefined;
  afterEach(() => {
    readOnly?.remove();
    readOnly = undefined;
  });

  // Node's recursive mkdir says `ENOENT … mkdir` here, as if a folder were missing: the store says why.
  it.each([
    { where: 'the directory itself', under: [] as string[] },
    { where: 'a folder above it that is not there yet', under: ['snapshots'] },
  ])('in $where: refused naming the read-only folder, not a missing one', async ({ under }) => {
    readOnly = readOnlyDir();
    const directory = path.join(readOnly.dir, ...under);
    const store = fileSnapshots(directory);
    const opened = store.open({ clusterId: 'c1', incidentId: testIncidentId(1), member: 'etcd-1' });
    await expect(opened).rejects.toThrow(`cannot make the snapshot directory ${path.join(directory, 'c1')}: ${readOnly.dir} ${readOnly.says}`);
    await expect(opened).rejects.not.toThrow(/ENOENT/);
    expect(unwritableDirectory(directory)).toBe(`${readOnly.dir} ${readOnly.says}`);
  });
});

describe('the newest snapshot kept, for a recovery plan', () => {
  it('the newest whole one of the cluster, with its size and the SHA-256 of its bytes; a partial or another cluster never', async () => {
    dir = tempDir();
    const store = fileSnapshots(dir.file('snapshots'));
    for (const [incidentId, keys] of [
      ['i-1', 'older'],
      ['i-2', 'newer'],
    ] as const) {
      const target = await store.open({ clusterId: 'prod/eu 1', incidentId, member: 'etcd-1' });
      await streamEtcdSnapshot(target.stream, keys);
      await target.keep('unused');
      fs.utimesSync(target.location, new Date(), new Date(Date.now() + (incidentId === 'i-2' ? 1_000 : 0)));
    }
    const partial = await store.open({ clusterId: 'prod/eu 1', incidentId: 'i-3', member: 'etcd-2' });
    const other = await store.open({ clusterId: 'staging', incidentId: 'i-4', member: 'etcd-1' });
    await streamEtcdSnapshot(other.stream, 'other');
    await other.keep('unused');

    const newest = await newestSnapshot(dir.file('snapshots'), 'prod/eu 1');
    const bytes = etcdSnapshotBytes('newer');
    expect(newest).toMatchObject({
      location: path.join(dir.file('snapshots'), 'prod_eu_1', 'i-2-etcd-1.db'),
      bytes: bytes.length,
      sha256: createHash('sha256').update(bytes).digest('hex'),
    });
    expect(newest!.takenAt).toBeGreaterThan(Date.now() - 60_000);
    await partial.discard();
  });

  it('none kept, or no directory for the cluster: none', async () => {
    dir = tempDir();
    expect(await newestSnapshot(dir.file('snapshots'), 'prod')).toBeUndefined();
  });
});
