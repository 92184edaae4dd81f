// What every function of the stack needs, on AWS: the table (store and directory, the latter with
// POLICY_DEFAULTS under each cluster's policy), the bus with its outcome metrics, the system clock
// and a Powertools logger. Kept apart from the pipeline's deps so the intake's bundle carries no
// etcd client and no scheduler.
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { createDynamoDirectory } from '../adapters/aws/dynamodb-directory.ts';
import { createDynamoIncidentStore } from '../adapters/aws/dynamodb-store.ts';
import { createEventBridgeBus } from '../adapters/aws/eventbridge-bus.ts';
import { createSecretsManagerSource } from '../adapters/aws/secrets.ts';
import type { Log } from '../ports/log.ts';
import type { Bus } from '../ports/bus.ts';
import { type Clock } from '../ports/clock.ts';
import { systemClock } from '../adapters/local/system-clock.ts';
import type { ClusterDirectory, MemberLookup } from '../ports/cluster-directory.ts';
import type { IncidentStore } from '../ports/incident-store.ts';
import { meteredBus, powertoolsSink } from '../lambda/metered-bus.ts';
import { dynamoClient, eventBridgeClient, secretsClient } from './clients.ts';
import { requireEnv, type Env } from './env.ts';
import { policyDefaultsFromEnv } from './policy-defaults-env.ts';

/** Also the stack's: its dashboard and alarms read this namespace. */
export const METRICS_NAMESPACE = 'EtcdRemediator';

export interface BaseDeps {
  store: IncidentStore;
  bus: Bus;
  directory: ClusterDirectory & MemberLookup;
  clock: Clock;
  log: Log;
}

export function baseDepsFromEnv(env: Env, functionName: string): BaseDeps {
  const { TABLE_NAME: tableName, BUS_NAME: busName } = requireEnv(env, functionName, ['TABLE_NAME', 'BUS_NAME']);
  const policyDefaults = policyDefaultsFromEnv(env, functionName);
  const serviceName = env.POWERTOOLS_SERVICE_NAME?.trim() || functionName;
  const log = new Logger({ serviceName });
  const dynamo = dynamoClient(env);
  const store = createDynamoIncidentStore({ client: dynamo, tableName });
  const metrics = new Metrics({ namespace: env.POWERTOOLS_METRICS_NAMESPACE?.trim() || METRICS_NAMESPACE, serviceName });
  const bus = meteredBus(createEventBridgeBus({ client: eventBridgeClient(env), busName }), {
    sink: powertoolsSink(metrics),
    openedAt: async (incidentId) => (await store.getIncident(incidentId))?.openedAt,
    log,
  });
  const directory = createDynamoDirectory({ client: dynamo, tableName, secrets: createSecretsManagerSource(secretsClient(env)), ...(policyDefaults ? { policyDefaults } : {}) });
  return { store, bus, directory, clock: systemClock, log };
}
