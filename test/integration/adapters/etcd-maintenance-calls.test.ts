// The maintenance calls over gRPC, against a real etcd that hit its quota: a 2 MiB
// --quota-backend-bytes filled by rewriting a few keys until etcd raises NOSPACE and refuses
// writes. Compacting the history, defragmenting and disarming (core/maintenance's NOSPACE steps,
// here by hand) make it accept writes again, the database smaller than before.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Etcd3 } from 'etcd3';
import { createMemberClient, type ClosableMemberClient } from '../../../functions/adapters/etcd/member-client.ts';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { startLab, type Lab } from '../../../infra/lab/lab.ts';

const QUOTA = 2 * 1024 * 1024;
const CALL_MS = 10_000;

let lab: Lab;
let client: ClosableMemberClient;
let writer: Etcd3;
beforeAll(async () => {
  lab = await startLab({ members: 1, memberArgs: { etcd1: ['--quota-backend-bytes', String(QUOTA)] } });
  client = createMemberClient({ endpoint: lab.members[0]!.directUrl, path: 'direct' });
  writer = new Etcd3({ hosts: lab.members[0]!.directUrl });
});
afterAll(async () => {
  writer?.close();
  client?.close();
  await lab?.down();
});

const put = (key: string, value: string) => writer.put(key).value(value);

/** A write through a client of its own: etcd3's circuit breaker opens on a client that saw NOSPACE refusals. */
async function putFresh(key: string, value: string): Promise<void> {
  const fresh = new Etcd3({ hosts: lab.members[0]!.directUrl });
  try {
    await fresh.put(key).value(value);
  } finally {
    fresh.close();
  }
}

describe('maintenance calls against an etcd at its quota', () => {
  it('NOSPACE refuses writes; compact, defragment and disarm make it accept them again, the database smaller', async () => {
    const value = 'x'.repeat(32 * 1024);
    // A few keys rewritten: the history (not the keyspace) fills the quota, as the API server's updates do.
    await waitFor(
      async () => {
        try {
          for (let i = 0; i < 8; i++) await put(`/churn/${i % 4}`, value);
        } catch (error) {
          if (/database space exceeded/.test(String(error))) return true;
          throw error;
        }
        return undefined;
      },
      { timeoutMs: 60_000, intervalMs: 0, what: 'the NOSPACE alarm' },
    );
    const full = await client.status(CALL_MS);
    expect(full.alarms).toEqual(['NOSPACE']);
    expect(full.dbSizeInUse).toBeLessThanOrEqual(full.dbSize);
    await expect(putFresh('/after', 'refused')).rejects.toThrow(/database space exceeded/);

    const reader = new Etcd3({ hosts: lab.members[0]!.directUrl });
    const revision = Number((await reader.get('/churn/0').exec()).header.revision);
    reader.close();
    await client.compact!(revision, CALL_MS);
    await client.defragment!(CALL_MS);
    const defragmented = await client.status(CALL_MS);
    expect(defragmented.dbSize).toBeLessThan(full.dbSize);
    expect(defragmented.alarms, 'the alarm stands until disarmed').toEqual(['NOSPACE']);

    await client.disarmNoSpace!(CALL_MS);
    expect((await client.status(CALL_MS)).alarms).toEqual([]);
    await putFresh('/after', 'accepted');
    const check = new Etcd3({ hosts: lab.members[0]!.directUrl });
    try {
      expect(await check.get('/after').string()).toBe('accepted');
      // What compaction kept: the latest value of each key.
      expect(await check.get('/churn/0').string()).toBe(value);
    } finally {
      check.close();
    }
  }, 120_000);
});
