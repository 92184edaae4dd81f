// The step-failed function, Lambda's on-failure destination of the pipeline functions: it reads
// the invocation record in AWS's documented format and ends the incident as the local runtime
// does, or keeps a record it cannot act on as a dead letter.
import { afterEach, describe, expect, it } from 'vitest';
import { detailTypes, makeEvent, routes } from '../../../events/catalogue.ts';
import { checkRegistration } from '../../../functions/adapters/aws/cluster-registration.ts';
import { moveLeader } from '../../../functions/app/move/move-leader.ts';
import { probeMembers } from '../../support/probe-members.ts';
import { readInvocationRecord } from '../../../functions/aws-wiring/invocation-record.ts';
import { toEventBridgeEvent } from '../../../functions/lambda/eventbridge.ts';
import { createStepFailedHandler } from '../../../functions/step-failed/handler.ts';
import { localContext } from '../../../infra/runtime/lambda-context.ts';
import { loadSample } from '../events/samples.ts';
import { failureRecord } from '../../support/aws-sim/invocation-record.ts';
import { harness, unhealthy, type Harness } from '../app/harness.ts';
import { sample } from '../core/fixtures.ts';

const ARN = 'arn:aws:lambda:eu-west-1:123456789012:function:EtcdRemediator-RemediateFunction1A2B3C-xYz';
const approved = () => toEventBridgeEvent({ detailType: 'RemediationApproved', detail: loadSample('RemediationApproved') }, 'eu-west-1');
const record = (event: unknown, errorType = 'Error', errorMessage = 'out of memory') =>
  failureRecord({ functionArn: ARN, requestId: 'req-1', tries: 3, event, errorType, errorMessage });

describe('readInvocationRecord', () => {
  it('every routed detail type goes to one function, so a failure record names its step', () => {
    for (const type of detailTypes) expect(routes[type].length, type).toBeLessThanOrEqual(1);
  });

  it('a record of retries spent: the step the event is routed to, the event, and the last error as its message says it', () => {
    const read = readInvocationRecord(record(approved()));
    expect(read).toMatchObject({
      ok: true,
      delivery: { functionName: 'remediate', error: 'out of memory', errorType: 'Error', event: { detailType: 'RemediationApproved' } },
    });
  });

  it('an event too old for Lambda, with no try that answered: says why Lambda gave up', () => {
    const { responseContext: _, responsePayload: __, ...expired } = record(approved());
    const read = readInvocationRecord({ ...expired, requestContext: { ...expired.requestContext, condition: 'EventAgeExceeded', approximateInvokeCount: 1 } });
    expect(read).toMatchObject({ ok: true, delivery: { error: 'Lambda gave up on the event (EventAgeExceeded after 1 try)' } });
  });

  it.each([
    { what: 'not a record', input: { detail: {} }, problem: /^not a Lambda invocation record \(version: / },
    {
      what: 'the event of another source',
      input: record({ ...approved(), source: 'aws.ec2' }),
      problem: /is not one of ours: .*source: must be "etcd-remediator"/,
    },
    {
      what: 'an event no function takes',
      input: record(toEventBridgeEvent({ detailType: 'RemediationCompleted', detail: loadSample('RemediationCompleted') })),
      problem: /^RemediationCompleted is routed to 0 functions/,
    },
  ])('$what: a problem named', ({ input, problem }) => {
    const read = readInvocationRecord(input);
    expect(read.ok).toBe(false);
    if (!read.ok) expect(read.problem).toMatch(problem);
  });
});

describe('the step-failed handler', () => {
  let h: Harness;
  afterEach(async () => h?.close());

  async function approvedIncident() {
    h.setSample((at) =>
      sample(
        at,
        [0, 1, 2].map((i) => ({ i, leader: 0 })),
      ),
    );
    await probeMembers(h.deps, { detailType: 'MemberUnhealthy', detail: unhealthy('etcd-1') });
    await moveLeader(h.deps, h.lastOf('MembersProbed'));
    return toEventBridgeEvent(makeEvent('RemediationApproved', h.lastOf('RemediationApproved')));
  }

  it("blocks the incident STEP_FAILED with the budget spent, in the local runtime's words", async () => {
    h = harness({ maxAttempts: 1 });
    const handler = createStepFailedHandler(h.deps);
    expect(await handler(record(await approvedIncident()), localContext('step-failed'))).toBe('blocked');
    expect(h.lastOf('RemediationBlocked')).toMatchObject({
      reason: 'STEP_FAILED',
      evidence: { functionName: 'remediate', error: 'out of memory', decidedBy: 'step-failed' },
    });
    expect(h.lastOf('RemediationBlocked').message).toMatch(
      /^The remediate step for etcd-1 \(91bc3c398fb3c146\), which answers on direct http:\/\/127\.0\.0\.1:4011, failed on every delivery of RemediationApproved \(attempt 0\): out of memory; blocked/,
    );
  });

  it('resumes it at its next attempt while the budget lasts', async () => {
    h = harness({ maxAttempts: 5 });
    const handler = createStepFailedHandler(h.deps);
    expect(await handler(record(await approvedIncident()), localContext('step-failed'))).toBe('resumed');
    expect(h.scheduled.at(-1)?.event.detail).toMatchObject({ attempt: 1, reason: 'STEP_FAILED' });
  });

  it('leaves a failure no resume can fix alone (an invalid event is a dead letter already)', async () => {
    h = harness({ maxAttempts: 1 });
    const handler = createStepFailedHandler(h.deps);
    expect(await handler(record(await approvedIncident(), 'InvalidEventError', 'RemediationApproved is invalid'), localContext('step-failed'))).toBe(
      'not-resumable',
    );
    expect((await h.deps.store.listIncidents())[0]?.state).toBe('open');
  });

  it('blocks, naming the field, an incident whose cluster entry the directory now refuses (a policy beyond a Lambda timeout)', async () => {
    h = harness({ maxAttempts: 5 });
    const event = await approvedIncident();
    // The entry as the directory reads it on AWS: registration and policy through the one check.
    const refusal = (() => {
      try {
        checkRegistration({ clusterId: 'c1', endpoints: h.cluster.endpoints, policy: { snapshotBeforeRemove: true, actuatorTimeoutMs: 600_000 } }, 'c1');
      } catch (error) {
        return error as Error;
      }
      throw new Error('the entry was expected to be refused');
    })();
    const { message } = refusal;
    const deps = { ...h.deps, directory: { get: () => Promise.reject(refusal) } };
    expect(message).toMatch(/^cluster c1: policy\.actuatorTimeoutMs: remediate needs 994 s/);
    expect(await createStepFailedHandler(deps)(record(event, 'ClusterRegistrationError', message), localContext('step-failed'))).toBe('blocked');
    const blocked = h.lastOf('RemediationBlocked');
    expect(blocked).toMatchObject({ reason: 'STEP_FAILED', evidence: { functionName: 'remediate', error: message } });
    expect(blocked.message).toContain(
      `failed on every delivery of RemediationApproved (attempt 0): ${message}; blocked, since the cluster's directory entry is refused.`,
    );
    expect((await h.deps.store.listIncidents())[0]?.state).toBe('blocked');
  });

  it('keeps a record it cannot read as a dead letter, naming why', async () => {
    h = harness();
    const handler = createStepFailedHandler(h.deps);
    expect(await handler({ hello: 'world' }, localContext('step-failed'))).toBe('unreadable');
    const [dead] = await h.deps.store.listDeadLetters();
    expect(dead).toMatchObject({ source: 'step-failed handler', payload: '{"hello":"world"}' });
    expect(dead?.error).toMatch(/^not a Lambda invocation record/);
  });
});
