// The journal in DynamoDB, as an earlier build left it: lines whose detail is text. They read back
// through the same reader as sqlite's, so a deployed stack upgraded mid-incident resumes it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDynamoIncidentStore } from '../../../functions/adapters/aws/dynamodb-store.ts';
import { lastApprovalIn } from '../../../functions/core/leader-move.ts';
import { markerOf, type JournalInput } from '../../../functions/core/journal.ts';
import { journalWords } from '../../../functions/core/journal-words.ts';
import { startDynalite, type Dynalite } from '../../support/dynalite.ts';

let dynamo: Dynalite;
beforeAll(async () => {
  dynamo = await startDynalite();
});
afterAll(async () => {
  await dynamo.close();
});

/** A line as an earlier build handed it to the store: its detail a string. */
const earlier = (at: number, step: string, text: string) => ({ at, step, detail: text }) as unknown as JournalInput;

describe('dynamodb journal lines of an earlier build', () => {
  it('read as fields where a step needs their facts, and as said otherwise', async () => {
    const store = createDynamoIncidentStore({ client: dynamo.client(), tableName: await dynamo.createTable(), clock: () => 1_750_000_000_000 });
    try {
      const { incident } = await store.openOrJoin({ clusterId: 'c1', targetKey: 'memberName=etcd-1', target: { memberName: 'etcd-1' }, reason: 'r', now: 1 });
      const id = incident.incidentId;
      await store.appendJournal(id, earlier(2, 'move-leader:approve', 'LEADER_GONE: the Node of etcd-1 is gone.'));
      await store.markStep(
        id,
        earlier(3, 'member-removed', 'removed through etcd-0 over direct http://10.0.0.1:2379') as JournalInput & { step: 'member-removed' },
      );
      await store.markStep(
        id,
        earlier(4, 'leader-elected', JSON.stringify({ id: 'b2', name: 'etcd-2', term: 9 })) as JournalInput & { step: 'leader-elected' },
      );

      const journal = await store.journal(id);
      expect(lastApprovalIn(journal)).toEqual({ reason: 'LEADER_GONE', leaderMove: 'skipped' });
      expect(markerOf(journal, 'leader-elected')?.detail).toEqual({ id: 'b2', name: 'etcd-2', term: 9 });
      expect(journal.map(journalWords)).toEqual([
        'LEADER_GONE: the Node of etcd-1 is gone.',
        'removed through etcd-0 over direct http://10.0.0.1:2379',
        'etcd-2 (b2) leads at term 9',
      ]);
      expect(await store.stepDone(id, 'member-removed')).toBe(true);
    } finally {
      await store.close();
    }
  });
});
