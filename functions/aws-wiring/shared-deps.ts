// What every function has on AWS, the intake included: the table's incident store (its dead letters
// counted), the bus with its outcome metrics, the system clock and a Powertools logger; POLICY_DEFAULTS
// checked at the cold start. No directory: the intake maps machines through its own lookup, so its
// bundle carries no Secrets Manager client (step-deps.ts builds the directory for the steps).
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { createDynamoIncidentStore } from '../adapters/aws/dynamodb-store.ts';
import { createEventBridgeBus } from '../adapters/aws/eventbridge-bus.ts';
import type { Deps } from '../app/common/index.ts';
import { METRICS_NAMESPACE } from '../core/incident/index.ts';
import type { PolicyInput } from '../core/policy/index.ts';
import { meteredBus, meteredDeadLetters, powertoolsSink } from '../lambda/metered-bus.ts';
import { systemClock } from '../lib/system-clock.ts';
import { clientConfig, requireEnv, type Env } from './env.ts';
import { policyDefaultsFromEnv } from './policy-defaults-env.ts';

export interface SharedDeps extends Pick<Deps, 'store' | 'bus' | 'clock' | 'log'> {
  /** The table's client (one per container, its connections kept warm), for whatever else reads the table. */
  dynamo: DynamoDBClient;
  tableName: string;
  /** POLICY_DEFAULTS, checked; undefined when unset. */
  policyDefaults: PolicyInput | undefined;
}

export function sharedDepsFromEnv(env: Env, functionName: string): SharedDeps {
  const { TABLE_NAME: tableName, BUS_NAME: busName } = requireEnv(env, functionName, ['TABLE_NAME', 'BUS_NAME']);
  const policyDefaults = policyDefaultsFromEnv(env, functionName);
  const serviceName = env.POWERTOOLS_SERVICE_NAME?.trim() || functionName;
  const log = new Logger({ serviceName });
  const dynamo = new DynamoDBClient(clientConfig(env, 'DYNAMODB'));
  const sink = powertoolsSink(new Metrics({ namespace: env.POWERTOOLS_METRICS_NAMESPACE?.trim() || METRICS_NAMESPACE, serviceName }));
  const store = meteredDeadLetters(createDynamoIncidentStore({ client: dynamo, tableName }), sink, log);
  const bus = meteredBus(createEventBridgeBus({ client: new EventBridgeClient(clientConfig(env, 'EVENTBRIDGE')), busName }), {
    sink,
    openedAt: async (incidentId) => (await store.getIncident(incidentId))?.openedAt,
    log,
  });
  return { store, bus, clock: systemClock, log, dynamo, tableName, policyDefaults };
}
