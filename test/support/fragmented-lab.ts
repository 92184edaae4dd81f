// Labs at the state maintenance is for. `fragment`: databases fragmented as a busy cluster's get: `liveMib` of keys kept, `churnMib`
// written and deleted, the history compacted (as the API server does every 5 minutes). Once a
// write commits after the compaction, every member reports the churn as free pages (dbSize less
// dbSizeInUse): what a defragmentation reclaims.
import { Etcd3 } from 'etcd3';
import { createMemberClient } from '../../functions/adapters/etcd/member-client.ts';
import { waitFor } from '../../functions/lib/wait-for.ts';
import type { Lab } from '../../infra/lab/lab.ts';

const MiB = 1024 * 1024;

/** A 2 MiB --quota-backend-bytes on each of `members` lab members (etcd1..etcdN, or another prefix's), for fillAndCompact. */
export const QUOTA_ARGS = (members: number, namePrefix = 'etcd'): Record<string, string[]> =>
  Object.fromEntries(Array.from({ length: members }, (_, i) => [`${namePrefix}${i + 1}`, ['--quota-backend-bytes', String(2 * MiB)]]));
const VALUE = Buffer.alloc(64 * 1024, 'v');

export async function fragment(lab: Lab, { liveMib, churnMib }: { liveMib: number; churnMib: number }): Promise<void> {
  const client = new Etcd3({ hosts: lab.endpoints() });
  try {
    const write = async (prefix: string, mib: number) => {
      const count = Math.ceil((mib * MiB) / VALUE.length);
      await Promise.all(
        Array.from({ length: 8 }, async (_, w) => {
          for (let i = w; i < count; i += 8) await client.put(`${prefix}/${i}`).value(VALUE);
        }),
      );
    };
    await write('/live', liveMib);
    await write('/churn', churnMib);
    // At the delete's own revision: a member's status may lag behind it on a loaded machine, and a
    // compaction below the delete keeps every churned value.
    const deleted = await client.delete().prefix('/churn/');
    const member = createMemberClient({ endpoint: lab.members[0]!.directUrl, path: 'direct' });
    try {
      await member.compact!(Number(deleted.header.revision), 60_000);
    } finally {
      member.close();
    }
    // Writes after the compaction until every member reports the churn as free pages: etcd refreshes
    // its in-use figure as it commits a write, and bbolt frees a page only once no read still holds it.
    await waitFor(
      async () => {
        await client.put('/fragmented').value(String(Date.now()));
        const free = await Promise.all(lab.members.filter((m) => !m.isLearner).map((m) => freeBytesOf(m.directUrl)));
        return free.every((bytes) => bytes >= (churnMib * MiB) / 2) ? true : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 200, what: 'every member to report the churn as free pages' },
    );
  } finally {
    client.close();
  }
}

async function freeBytesOf(endpoint: string): Promise<number> {
  const member = createMemberClient({ endpoint, path: 'direct' });
  try {
    const { dbSize, dbSizeInUse } = await member.status(5_000);
    return dbSize === undefined || dbSizeInUse === undefined ? 0 : dbSize - dbSizeInUse;
  } finally {
    member.close();
  }
}

/** Rewrites a few keys until etcd raises NOSPACE, then compacts the history to the last revision: what the API server's updates and its compactor leave. */
export async function fillAndCompact(lab: Lab): Promise<void> {
  const value = 'x'.repeat(32 * 1024);
  await waitFor(
    async () => {
      // A client of its own each round: etcd3's circuit breaker opens on a client that saw refusals.
      const writer = new Etcd3({ hosts: lab.endpoints() });
      try {
        for (let i = 0; i < 16; i++) await writer.put(`/churn/${i % 4}`).value(value);
      } catch (error) {
        if (/database space exceeded/.test(String(error))) return true;
        throw error;
      } finally {
        writer.close();
      }
      return undefined;
    },
    { timeoutMs: 90_000, intervalMs: 0, what: 'the NOSPACE alarm' },
  );
  const client = createMemberClient({ endpoint: lab.members[0]!.directUrl, path: 'direct' });
  try {
    const status = await client.status(10_000);
    await client.compact!(status.revision!, 10_000);
  } finally {
    client.close();
  }
}

/** Every alarm `members` report, their own and the others' (the member that raised one may be down). */
export async function alarmsOf(members: readonly { name: string; directUrl: string }[]): Promise<string[]> {
  const alarms: string[] = [];
  for (const m of members) {
    const client = createMemberClient({ endpoint: m.directUrl, path: 'direct' });
    try {
      const status = await client.status(10_000);
      alarms.push(...status.alarms.map((a) => `${m.name} ${a}`), ...(status.othersAlarms ?? []).map((a) => `${a.member} ${a.alarm} (as ${m.name} says)`));
    } finally {
      client.close();
    }
  }
  return alarms;
}
