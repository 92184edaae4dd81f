// The periodic learner check as AWS runs it, on dynalite and real etcd: the schedule rule's fixed
// input hands probe-members a round, which asks for one LearnerCheckDue per registered cluster
// (the fleet#clusters index); each is handled by probe-members' own handler, which removes a
// learner that never started once past stuckLearnerAfterMs, with no incident opened.
import { Logger } from '@aws-lambda-powertools/logger';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseEvent } from '../../../events/validate.ts';
import type { EventEnvelope } from '../../../events/catalogue.ts';
import { putCluster } from '../../../functions/adapters/aws/cluster-registration.ts';
import { createDynamoDirectory } from '../../../functions/adapters/aws/dynamodb-directory.ts';
import { createDynamoIncidentStore } from '../../../functions/adapters/aws/dynamodb-store.ts';
import { etcdOnlyActuator } from '../../../functions/adapters/etcd/etcd-only-actuator.ts';
import { createEtcdAccess } from '../../../functions/adapters/local/etcd-access.ts';
import { createKubeEtcd } from '../../../functions/adapters/kube/index.ts';
import { systemClock } from '../../../functions/lib/system-clock.ts';
import type { ClusterDeps } from '../../../functions/app/common/deps.ts';
import { LEARNER_CHECK_ROUND_INPUT } from '../../../functions/core/learners/learner-check.ts';
import { toEventBridgeEvent } from '../../../functions/lambda/eventbridge.ts';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { createProbeMembersHandler } from '../../../functions/probe-members/handler.ts';
import { isLearnerCheckRound, learnerCheckRound } from '../../../functions/probe-members/learner-round.ts';
import { startLab, type Lab } from '../../../infra/lab/lab.ts';
import { localContext } from '../../../infra/runtime/lambda-context.ts';
import { removalsRecorded } from '../../support/aws-sim/lab-on-stack.ts';
import { startDynalite, type Dynalite } from '../../support/dynalite.ts';

let dynamo: Dynalite;
let lab: Lab | undefined;
const etcd = createEtcdAccess(createKubeEtcd);
beforeAll(async () => {
  dynamo = await startDynalite();
});
afterEach(async () => {
  await lab?.down();
  lab = undefined;
});
afterAll(async () => {
  await etcd.close();
  await dynamo.close();
});

const noSecrets = { tlsFiles: () => Promise.reject(new Error('no secret here')), kubeconfig: () => Promise.reject(new Error('no secret here')) };

async function stack(): Promise<{ deps: ClusterDeps; published: EventEnvelope[]; tableName: string }> {
  const tableName = await dynamo.createTable();
  const client = dynamo.client();
  const published: EventEnvelope[] = [];
  const deps: ClusterDeps = {
    store: createDynamoIncidentStore({ client, tableName }),
    bus: { publish: async (...events) => void published.push(...events) },
    scheduler: { schedule: () => Promise.reject(new Error('nothing is scheduled by a learner check')), cancel: async () => {} },
    directory: createDynamoDirectory({ client, tableName, secrets: noSecrets, cacheMs: 0 }),
    etcdFor: etcd.etcdFor,
    actuator: etcdOnlyActuator,
    clock: systemClock,
    random: Math.random,
    log: new Logger({ serviceName: 'probe-members', logLevel: 'SILENT' }),
  };
  return { deps, published, tableName };
}

describe('the learner check round on AWS', () => {
  it('is recognised by its fixed input alone, and asks for one valid LearnerCheckDue per registered cluster', async () => {
    const { deps, published } = await stack();
    expect(isLearnerCheckRound(LEARNER_CHECK_ROUND_INPUT)).toBe(true);
    expect(isLearnerCheckRound(toEventBridgeEvent({ detailType: 'LearnerCheckDue', detail: { clusterId: 'a', at: new Date().toISOString() } }))).toBe(false);
    expect(await learnerCheckRound(deps)).toEqual({ asked: 0 });
    expect(published).toEqual([]);
  });

  it('a learner that never started is removed past stuckLearnerAfterMs by the checks the rounds ask for; no incident, no removal record', async () => {
    lab = await startLab({ members: 1 });
    const { deps, published, tableName } = await stack();
    const policy = { stuckLearnerAfterMs: 1_000, learnerCheckEveryMs: 60_000, callTimeoutMs: 1_000 };
    // The lab, and a cluster whose endpoint answers nothing: its check finds no learner, the lab's goes on.
    await putCluster(dynamo.client(), tableName, { clusterId: 'lab', endpoints: lab.endpoints(), policy });
    await putCluster(dynamo.client(), tableName, { clusterId: 'gone', endpoints: ['http://127.0.0.1:9'], policy });
    const handler = createProbeMembersHandler(deps);
    const stuck = await lab.addUnstartedLearner({ timeoutMs: 5_000 });

    /** One round, and each check it asked for handled by probe-members, as the bus rule routes them. */
    const round = async () => {
      const before = published.length;
      await learnerCheckRound(deps);
      const asked = published.slice(before);
      for (const event of asked) {
        expect(parseEvent(event.detailType, event.detail).ok).toBe(true);
        await handler(toEventBridgeEvent(event), localContext('probe-members'));
      }
      return asked;
    };

    const first = await round();
    expect(first.map((e) => [e.detailType, e.detail.clusterId]).sort()).toEqual([
      ['LearnerCheckDue', 'gone'],
      ['LearnerCheckDue', 'lab'],
    ]);
    const seen = (await deps.store.learnerSightings('lab'))[stuck];
    expect(seen).toBeDefined();
    expect(published.filter((e) => e.detailType === 'LearnerRemoved')).toEqual([]);

    await waitFor(async () => (Date.now() - seen! > 1_000 ? true : undefined), { timeoutMs: 3_000, what: 'the learner to be past its window' });
    await round();
    const removed = published.filter((e): e is EventEnvelope<'LearnerRemoved'> => e.detailType === 'LearnerRemoved');
    expect(removed).toHaveLength(1);
    expect(removed[0]!.detail).toMatchObject({ clusterId: 'lab', reason: 'STUCK_LEARNER_REMOVED', learner: { memberId: stuck } });
    expect(removed[0]!.detail.incidentId).toBeUndefined();
    expect((await lab.memberList()).map((m) => m.id)).not.toContain(stuck);
    expect(await deps.store.listIncidents()).toEqual([]);
    expect(await deps.store.openedSince(0)).toEqual([]);
    expect(await deps.store.learnerSightings('lab')).toEqual({});
    expect(await removalsRecorded(lab)).toEqual([]);
  });
});
