// What every function of the stack needs, on AWS: the table's incident store (its dead letters
// counted), the bus with its outcome metrics, the system clock and a Powertools logger;
// POLICY_DEFAULTS checked at the cold start. The intake needs no more (it maps machines through its
// own lookup), so this file builds no directory, and its bundle carries no Secrets Manager client;
// base-deps.ts adds the directory.
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createDynamoIncidentStore } from '../adapters/aws/dynamodb-store.ts';
import { createEventBridgeBus } from '../adapters/aws/eventbridge-bus.ts';
import { systemClock } from '../lib/system-clock.ts';
import { METRICS_NAMESPACE } from '../core/incident/index.ts';
import type { PolicyInput } from '../core/policy/index.ts';
import { meteredBus, meteredDeadLetters, powertoolsSink } from '../lambda/metered-bus.ts';
import type { Bus } from '../ports/bus.ts';
import type { Clock } from '../ports/clock.ts';
import type { IncidentStore } from '../ports/incident-store.ts';
import type { Log } from '../ports/log.ts';
import { dynamoClient, eventBridgeClient } from './clients.ts';
import { requireEnv, type Env } from './env.ts';
import { policyDefaultsFromEnv } from './policy-defaults-env.ts';

export interface CoreDeps {
  store: IncidentStore;
  bus: Bus;
  clock: Clock;
  log: Log;
  /** The table's client, for whatever else reads the table. */
  dynamo: DynamoDBClient;
  tableName: string;
  /** POLICY_DEFAULTS, checked; undefined when unset. */
  policyDefaults: PolicyInput | undefined;
}

export function coreDepsFromEnv(env: Env, functionName: string): CoreDeps {
  const { TABLE_NAME: tableName, BUS_NAME: busName } = requireEnv(env, functionName, ['TABLE_NAME', 'BUS_NAME']);
  const policyDefaults = policyDefaultsFromEnv(env, functionName);
  const serviceName = env.POWERTOOLS_SERVICE_NAME?.trim() || functionName;
  const log = new Logger({ serviceName });
  const dynamo = dynamoClient(env);
  const metrics = new Metrics({ namespace: env.POWERTOOLS_METRICS_NAMESPACE?.trim() || METRICS_NAMESPACE, serviceName });
  const sink = powertoolsSink(metrics);
  const store = meteredDeadLetters(createDynamoIncidentStore({ client: dynamo, tableName }), sink, log);
  const bus = meteredBus(createEventBridgeBus({ client: eventBridgeClient(env), busName }), {
    sink,
    openedAt: async (incidentId) => (await store.getIncident(incidentId))?.openedAt,
    log,
  });
  return { store, bus, clock: systemClock, log, dynamo, tableName, policyDefaults };
}
