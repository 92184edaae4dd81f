// A lab whose databases are fragmented as a busy cluster's get: `liveMib` of keys kept, `churnMib`
// written and deleted, the history compacted (as the API server does every 5 minutes). Once a
// write commits after the compaction, every member reports the churn as free pages (dbSize less
// dbSizeInUse): what a defragmentation reclaims.
import { Etcd3 } from 'etcd3';
import { createMemberClient } from '../../functions/adapters/etcd/member-client.ts';
import type { Lab } from '../../infra/lab/lab.ts';

const MiB = 1024 * 1024;
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
    await client.delete().prefix('/churn/');
    const member = createMemberClient({ endpoint: lab.members[0]!.directUrl, path: 'direct' });
    try {
      await member.compact!((await member.status(10_000)).revision!, 60_000);
    } finally {
      member.close();
    }
    // A write after the compaction: etcd refreshes its in-use figure as it commits one.
    await client.put('/fragmented').value(String(Date.now()));
  } finally {
    client.close();
  }
}
