// The AWS edge without AWS: what a cold start checks, and that a container builds its deps once.
import { describe, expect, it, vi } from 'vitest';
import { clusterDepsFromEnv } from '../../../functions/aws-wiring/cluster-deps.ts';
import { awsIntakeDepsFromEnv } from '../../../functions/aws-wiring/intake-deps.ts';
import { clientConfig, MissingEnvError } from '../../../functions/aws-wiring/env.ts';
import { lambdaEntry } from '../../../functions/aws-wiring/lambda-entry.ts';
import { handler as probeMembers } from '../../../functions/probe-members/lambda.ts';
import { localContext } from '../../../infra/runtime/lambda-context.ts';
import { fullEnv } from './env-fixture.ts';

const full = fullEnv;

describe('a cold start with variables missing', () => {
  it('names every one missing, and the function', () => {
    const { BUS_ARN: _, SHORT_WAIT_QUEUE_URL: __, ...env } = full;
    expect(() => clusterDepsFromEnv({ ...env, TABLE_NAME: ' ' }, 'remediate')).toThrow(
      new MissingEnvError(['TABLE_NAME', 'BUS_ARN', 'SHORT_WAIT_QUEUE_URL'], 'remediate'),
    );
    expect(() => clusterDepsFromEnv({}, 'remediate')).toThrow(
      'remediate: environment variables TABLE_NAME, BUS_NAME, BUS_ARN, SCHEDULE_GROUP, SCHEDULER_ROLE_ARN, SCHEDULER_DLQ_ARN, SHORT_WAIT_QUEUE_URL are not set; the stack sets them on the function (see infra/cdk)',
    );
  });

  it('the intake needs only the table and the bus', () => {
    expect(() => awsIntakeDepsFromEnv({ TABLE_NAME: 't' })).toThrow('intake: environment variable BUS_NAME is not set');
    expect(awsIntakeDepsFromEnv({ TABLE_NAME: 't', BUS_NAME: 'b', AWS_REGION: 'eu-west-1' })).toMatchObject({
      store: expect.any(Object),
      bus: expect.any(Object),
    });
  });

  it('fails the invocation of a Lambda entry with that one line', async () => {
    const saved = process.env.TABLE_NAME;
    delete process.env.TABLE_NAME;
    try {
      await expect(probeMembers({}, localContext('probe-members'))).rejects.toThrow(/^probe-members: environment variables TABLE_NAME, /);
    } finally {
      if (saved !== undefined) process.env.TABLE_NAME = saved;
    }
  });
});

describe('with every variable set', () => {
  it('builds the deps of a pipeline function: every port, the system clock, an etcd access', () => {
    const deps = clusterDepsFromEnv(full, 'move-leader');
    expect(Object.keys(deps).sort()).toEqual(['actuator', 'bus', 'clock', 'directory', 'etcdFor', 'log', 'random', 'scheduler', 'store']);
    // The Machine actuator for clusters with Cluster API access, etcd-only for the rest.
    expect(deps.actuator.name).toBe('per-cluster (capi-machine where configured, else etcd-only)');
    expect(Math.abs(deps.clock.now() - Date.now())).toBeLessThan(1_000);
  });
});

describe('lambdaEntry', () => {
  it('builds once per container, and again after a build that failed', async () => {
    const build = vi.fn<() => string>().mockImplementationOnce(() => {
      throw new Error('TABLE_NAME is not set');
    });
    build.mockReturnValue('deps');
    const create = vi.fn((deps: string) => async (event: unknown) => `${deps}:${String(event)}`);
    const handler = lambdaEntry(build, create);
    await expect(handler('a', localContext('f'))).rejects.toThrow('TABLE_NAME is not set');
    expect(await handler('b', localContext('f'))).toBe('deps:b');
    expect(await handler('c', localContext('f'))).toBe('deps:c');
    expect(build).toHaveBeenCalledTimes(2);
    expect(create).toHaveBeenCalledTimes(1);
  });
});

describe('clientConfig', () => {
  it('takes the per-service endpoint, then the general one, and the region', () => {
    expect(
      clientConfig({ AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:1', AWS_ENDPOINT_URL: 'http://127.0.0.1:2', AWS_REGION: 'eu-west-1' }, 'DYNAMODB'),
    ).toEqual({ endpoint: 'http://127.0.0.1:1', region: 'eu-west-1' });
    expect(clientConfig({ AWS_ENDPOINT_URL: 'http://127.0.0.1:2' }, 'SECRETS_MANAGER')).toEqual({ endpoint: 'http://127.0.0.1:2' });
    expect(clientConfig({}, 'SQS')).toEqual({});
  });
});
