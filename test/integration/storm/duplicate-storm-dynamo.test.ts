// Issue 10 §3, duplicate storm on the DynamoDB store (dynalite): the four functions' own handlers
// on a real 3-member lab, as in the embedded runtime, but every incident, journal line, lock and
// dead letter in DynamoDB. Four "containers" (each with its own DynamoDB client and store, as four
// Lambda containers have) take the deliveries in turn, so the 100 reports race on DynamoDB's
// conditional writes, not on one process's memory.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Logger } from '@aws-lambda-powertools/logger';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makeEvent, type EventEnvelope, type FunctionName } from '../../../events/catalogue.ts';
import { parseEvent } from '../../../events/validate.ts';
import { createDynamoIncidentStore } from '../../../functions/adapters/aws/dynamodb-store.ts';
import type { Deps } from '../../../functions/app/deps.ts';
import { parsePolicy } from '../../../functions/core/policy.ts';
import type { Actuator } from '../../../functions/ports/actuator.ts';
import { systemClock } from '../../../functions/adapters/local/system-clock.ts';
import type { IncidentStore } from '../../../functions/ports/incident-store.ts';
import type { Scheduler } from '../../../functions/ports/scheduler.ts';
import { toEventBridgeEvent } from '../../../functions/lambda/eventbridge.ts';
import type { LambdaHandler } from '../../../functions/lambda/event-handler.ts';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { startLab, type Lab } from '../../../infra/lab/lab.ts';
import { busHandlers, type HandlerFactory } from '../../../infra/local/function-handlers.ts';
import { createInProcessBus, type BusFailure, type InProcessBus } from '../../../functions/adapters/local/in-process-bus.ts';
import { localContext } from '../../../infra/local/lambda-context.ts';
import { createStaticDirectory } from '../../../functions/adapters/local/static-directory.ts';
import { fileSnapshots } from '../../../functions/adapters/local/file-snapshots.ts';
import { startDynalite, type Dynalite } from '../../support/dynalite.ts';
import { labPolicy, recordingEtcd, type CallLog } from '../e2e/pipeline.ts';
import { expectOneRemoval, expectStormJournal, settle } from './support.ts';

const STORM = 100;
const CONTAINERS = 4;


interface DynamoPipeline {
  bus: InProcessBus;
  /** A store on a client of its own, for the test's reads. */
  store: IncidentStore;
  events: EventEnvelope[];
  calls: CallLog;
  actuatorCalls: string[];
  failures: BusFailure[];
  deadLetters: unknown[];
  close(): Promise<void>;
}

async function startDynamoPipeline(lab: Lab, dynamo: Dynalite): Promise<DynamoPipeline> {
  const tableName = await dynamo.createTable();
  const openStore = () => createDynamoIncidentStore({ client: dynamo.client(), tableName });
  const calls: CallLog = { memberRemove: [], removed: [], removedAt: [], moveLeader: [] };
  const etcd = recordingEtcd(calls);
  const directory = createStaticDirectory([{ clusterId: 'lab', endpoints: lab.endpoints(), policy: parsePolicy(labPolicy) }]);
  const actuatorCalls: string[] = [];
  const actuator: Actuator = {
    name: 'counting',
    replace: async ({ incidentId, member }) => {
      actuatorCalls.push(incidentId);
      return { action: 'none', detail: `counted ${member.name || member.id}` };
    },
  };
  const timers = new Set<NodeJS.Timeout>();
  // EventBridge Scheduler's stand-in: the event, validated, on the bus at its time; a name put again replaces it.
  const pending = new Map<string, NodeJS.Timeout>();
  const scheduler: Scheduler = {
    schedule: async ({ name, at, event }) => {
      clearTimeout(pending.get(name));
      const timer = setTimeout(() => {
        pending.delete(name);
        timers.delete(timer);
        const parsed = parseEvent(event.detailType, event.detail);
        if (parsed.ok) bus.publish(parsed.event).catch(() => undefined);
      }, Math.max(0, at - Date.now()));
      pending.set(name, timer);
      timers.add(timer);
    },
    cancel: async (name) => {
      clearTimeout(pending.get(name));
      pending.delete(name);
    },
  };
  const failures: BusFailure[] = [];
  const deadLetters: unknown[] = [];
  // The snapshot a removal takes by default, into one directory (as into one bucket).
  const snapshots = fileSnapshots(fs.mkdtempSync(path.join(os.tmpdir(), 'storm-snapshots-')));
  // Each container: its own client and store, its handlers built on first use.
  const containers = Array.from({ length: CONTAINERS }, () => {
    const deps: Deps = {
      store: openStore(),
      bus: { publish: (...events) => bus.publish(...events) },
      scheduler,
      directory,
      etcdFor: etcd.etcdFor,
      actuator,
      snapshots,
      clock: systemClock,
      random: Math.random,
      // A Powertools logger, so the handlers log through it, and quietly.
      log: new Logger({ serviceName: 'storm', logLevel: 'SILENT' }),
    };
    return deps;
  });
  const invoke = (name: FunctionName, create: HandlerFactory) => {
    const handlers = containers.map((deps) => () => create(deps));
    const built: (LambdaHandler<unknown> | undefined)[] = [];
    let next = 0;
    return async (event: EventEnvelope) => {
      const i = next++ % CONTAINERS;
      built[i] ??= handlers[i]!();
      await built[i](toEventBridgeEvent(event), localContext(name));
    };
  };
  const bus: InProcessBus = createInProcessBus({
    handlers: busHandlers(invoke),
    onDeadLetter: (dead) => void deadLetters.push(dead),
    onError: (failure) => void failures.push(failure),
    // As Lambda redelivers a failed asynchronous invocation, sooner.
    redeliveryDelaysMs: [200, 1_000],
  });
  const events: EventEnvelope[] = [];
  bus.subscribe((e) => events.push(e));
  return {
    bus,
    store: openStore(),
    events,
    calls,
    actuatorCalls,
    failures,
    deadLetters,
    async close() {
      for (const timer of timers) clearTimeout(timer);
      await bus.drain({ timeoutMs: 5_000 }).catch(() => undefined);
      bus.close();
      await etcd.close();
    },
  };
}

describe.sequential('duplicate storm on the DynamoDB store (dynalite)', () => {
  let dynamo: Dynalite;
  let lab: Lab | undefined;
  let pipeline: DynamoPipeline | undefined;
  beforeAll(async () => {
    dynamo = await startDynalite();
  });
  afterEach(async () => {
    try {
      await pipeline?.close();
    } finally {
      pipeline = undefined;
      await lab?.down();
      lab = undefined;
    }
  });
  afterAll(async () => {
    await dynamo?.close();
  });

  for (const variant of ['identical', 'observedAt differs'] as const) {
    it(`${STORM} ${variant} MemberUnhealthy at once, ${CONTAINERS} containers: one incident, one MemberRemove, one actuator call`, async () => {
      lab = await startLab({ members: 3 });
      const leader = await lab.leader();
      const follower = lab.members.find((m) => m.id !== leader.id)!;
      await settle(lab);
      const p = (pipeline = await startDynamoPipeline(lab, dynamo));
      const base = Date.now();
      const at = new Date(base).toISOString();
      const reports = Array.from({ length: STORM }, (_, i) =>
        makeEvent('MemberUnhealthy', {
          clusterId: 'lab',
          attempt: 0,
          target: { memberName: follower.name },
          reason: 'kubelet down',
          source: 'storm',
          observedAt: variant === 'identical' ? at : new Date(base - i * 1_000).toISOString(),
          at,
        }),
      );
      // One publish of all 100: every delivery is queued before any handler runs.
      await p.bus.publish(...reports);
      await waitFor(async () => p.events.find((e) => e.detailType === 'RemediationCompleted'), { timeoutMs: 60_000, what: 'the remediation to complete' });
      await p.bus.drain({ timeoutMs: 15_000 });

      const incidents = await p.store.listIncidents({ clusterId: 'lab' });
      expect(incidents.map((i) => i.state)).toEqual(['awaiting-replacement']);
      const [incident] = incidents;
      expectOneRemoval(p.calls, p.events, follower.id);
      expect(p.actuatorCalls).toEqual([incident!.incidentId]);
      await expectStormJournal(p.store, incident!.incidentId, STORM);
      expect(p.events.filter((e) => e.detailType === 'RemediationCompleted')).toHaveLength(1);
      expect(p.failures.map((f) => `${f.functionName}: ${String(f.error)}`)).toEqual([]);
      expect(p.deadLetters).toEqual([]);
      expect(await p.store.listDeadLetters()).toEqual([]);
      await waitFor(async () => ((await lab!.memberList()).length === 2 ? true : undefined), { timeoutMs: 5_000, what: 'two members left' });
    }, 120_000);
  }
});
