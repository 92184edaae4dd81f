// The four functions' own handlers on a DynamoDB table (dynalite), as in the embedded runtime but
// with every incident, journal line, lock and dead letter in DynamoDB: several "containers" (each
// with its own DynamoDB client and store, as Lambda containers have) take the deliveries in turn,
// so concurrent deliveries race on DynamoDB's conditional writes, not on one process's memory.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Logger } from '@aws-lambda-powertools/logger';
import type { EventEnvelope, FunctionName } from '../../../events/catalogue.ts';
import { parseEvent } from '../../../events/validate.ts';
import { createDynamoIncidentStore } from '../../../functions/adapters/aws/dynamodb-store.ts';
import type { ClusterDeps } from '../../../functions/app/common/deps.ts';
import { parsePolicy, type PolicyInput } from '../../../functions/core/policy/policy.ts';
import type { Actuator } from '../../../functions/ports/actuator.ts';
import { systemClock } from '../../../functions/lib/system-clock.ts';
import type { IncidentStore } from '../../../functions/ports/incident-store.ts';
import type { Scheduler } from '../../../functions/ports/scheduler.ts';
import { toEventBridgeEvent } from '../../../functions/lambda/eventbridge.ts';
import type { LambdaHandler } from '../../../functions/lambda/event-handler.ts';
import type { Lab } from '../../../infra/lab/lab.ts';
import { busHandlers, type HandlerFactory } from '../../../infra/runtime/function-handlers.ts';
import { createInProcessBus, type BusFailure, type InProcessBus } from '../../../functions/adapters/local/in-process-bus.ts';
import { localContext } from '../../../infra/runtime/lambda-context.ts';
import { createStaticDirectory } from '../../../functions/adapters/local/static-directory.ts';
import { fileSnapshots } from '../../../functions/adapters/local/file-snapshots.ts';
import type { Dynalite } from '../../support/dynalite.ts';
import { labPolicy, recordingEtcd, type CallLog } from '../e2e/pipeline.ts';

export interface DynamoPipelineOptions {
  /** How many containers take the deliveries in turn (default 4). */
  containers?: number;
  /** The lab's cluster id in the directory (default lab). */
  clusterId?: string;
  /** Over labPolicy. */
  policy?: PolicyInput;
  /** More clusters of the fleet, which nothing answers for. */
  otherClusters?: string[];
}

export interface DynamoPipeline {
  tableName: string;
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

export async function startDynamoPipeline(lab: Lab, dynamo: Dynalite, options: DynamoPipelineOptions = {}): Promise<DynamoPipeline> {
  const CONTAINERS = options.containers ?? 4;
  const tableName = await dynamo.createTable();
  const openStore = () => createDynamoIncidentStore({ client: dynamo.client(), tableName });
  const calls: CallLog = { memberRemove: [], removed: [], removedAt: [], moveLeader: [] };
  const etcd = recordingEtcd(calls);
  const policy = parsePolicy({ ...labPolicy, ...options.policy });
  const others = (options.otherClusters ?? []).map((clusterId) => ({ clusterId, endpoints: ['http://127.0.0.1:1'], policy }));
  const directory = createStaticDirectory([{ clusterId: options.clusterId ?? 'lab', endpoints: lab.endpoints(), policy }, ...others]);
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
      const timer = setTimeout(
        () => {
          pending.delete(name);
          timers.delete(timer);
          const parsed = parseEvent(event.detailType, event.detail);
          if (parsed.ok) bus.publish(parsed.event).catch(() => undefined);
        },
        Math.max(0, at - Date.now()),
      );
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
  const snapshotDir = fs.mkdtempSync(path.join(os.tmpdir(), 'storm-snapshots-'));
  const snapshots = fileSnapshots(snapshotDir);
  // Each container: its own client and store, its handlers built on first use.
  const containers = Array.from({ length: CONTAINERS }, () => {
    const deps: ClusterDeps = {
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
    tableName,
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
      fs.rmSync(snapshotDir, { recursive: true, force: true });
    },
  };
}
