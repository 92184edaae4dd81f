// An incident item an earlier build wrote reads back under today's path names: its views said
// `exec` for the exec relay, as JSON text or, when large, gzipped.
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { COMPRESS_ABOVE_BYTES } from '../../../../functions/adapters/aws/dynamodb-codec.ts';
import { newIncidentItem, toIncident } from '../../../../functions/adapters/aws/dynamodb-incident-item.ts';
import { writtenByEarlierBuild } from '../../../support/earlier-paths.ts';
import { view } from '../../core/fixtures.ts';

const item = newIncidentItem({
  incidentId: 'i-1',
  clusterId: 'c1',
  targetKey: 'memberName=etcd-0',
  target: { memberName: 'etcd-0' },
  reason: 'r',
  openedAt: 1_000,
});
const today = view(2_000, [
  { i: 0, paths: { direct: 'refused', 'exec-relay': 'ok' } },
  { i: 1, leader: 0 },
  { i: 2, leader: 0 },
]);

describe('dynamodb incident item: views an earlier build wrote', () => {
  it('as JSON text, `exec` reads as exec-relay', () => {
    const views = writtenByEarlierBuild([today]);
    expect(views).toContain('"path":"exec"');
    expect(toIncident({ ...item, views }).views).toEqual([today]);
  });

  it('gzipped, as a large field is stored, the same', () => {
    const many = Array.from({ length: 20 }, (_, i) => ({ ...today, at: 2_000 + i }));
    const text = writtenByEarlierBuild(many);
    expect(Buffer.byteLength(text)).toBeGreaterThan(COMPRESS_ABOVE_BYTES);
    expect(toIncident({ ...item, views: new Uint8Array(gzipSync(text)) }).views).toEqual(many);
  });
});
