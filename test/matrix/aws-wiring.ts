// Case 21's remediator: the synthesized stack run as deployed (test/support/aws-sim), on the
// matrix's lab. The harness counts it as one of ctx.others; its events are the bus's accepted
// entries, and its etcd calls, made in container processes this process cannot see into, are
// read off the lab's own member list (see `watchRemovals`).
import { EVENT_SOURCE, isTerminalEvent, type EventEnvelope } from '../../events/catalogue.ts';
import { parseEvent } from '../../events/validate.ts';
import { createDynamoIncidentStore } from '../../functions/adapters/aws/dynamodb-store.ts';
import { waitFor } from '../../functions/lib/wait-for.ts';
import type { PolicyInput } from '../../functions/core/policy/policy.ts';
import type { IncidentStore } from '../../functions/ports/incident-store.ts';
import type { Lab } from '../../infra/lab/lab.ts';
import type { TerminalEvent } from '../../infra/runtime/runtime.ts';
import { sharedStack } from '../infra/shared-synth.ts';
import type { SynthesizedFiles } from '../infra/synth.ts';
import { type CallLog, labPolicy } from '../integration/e2e/pipeline.ts';
import { startDeployedStack, type DeployedStack, type DeployedStackOptions } from '../support/aws-sim/deployed-stack.ts';
import { registerLab, reportUnhealthy } from '../support/aws-sim/lab-on-stack.ts';
import type { CaseContext, Remediator } from './harness.ts';

export interface AwsWiring extends Remediator {
  stack: DeployedStack;
  /** The stack's incident store, on a client of its own, for a case's reads. */
  store: IncidentStore;
  /** Reports the member on the bus and waits for the incident's terminal event on it. */
  remediate(memberName: string, timeoutMs: number): Promise<TerminalEvent>;
}

/** Synthesized once per process, or read from the run's shared synth: bundling the functions is most of a synth's time. */
let synthesized: Promise<SynthesizedFiles> | undefined;
export const synthOnce = (): Promise<SynthesizedFiles> => (synthesized ??= sharedStack());

/**
 * MemberRemove as etcd accepted it, read off the lab's member list every 100 ms through a
 * surviving member: each member that leaves the list counts as one accepted MemberRemove (the
 * only way a member leaves). It cannot see a send etcd refused, nor a second one for a member
 * already gone (etcd refuses that too), so `memberRemove` holds the same ids as `removed`. Prompt,
 * so the quorum checker stops sampling a removed member before it reads as an outage.
 */
function watchRemovals(lab: Lab, calls: CallLog): { stop(): Promise<void> } {
  const before = lab.members.filter((m) => !m.isLearner).map((m) => m.id);
  let stopped = false;
  const watching = waitFor(
    async () => {
      if (stopped) return true;
      const listed = new Set((await lab.memberList(300)).map((m) => m.id));
      for (const id of before) {
        if (listed.has(id) || calls.removed.includes(id)) continue;
        calls.removedAt.push(calls.memberRemove.push(id) - 1);
        calls.removed.push(id);
      }
      return undefined;
    },
    { timeoutMs: 600_000, intervalMs: 100, what: 'the watch to stop' },
  ).catch(() => undefined);
  return {
    async stop() {
      stopped = true;
      await watching;
    },
  };
}

/** Starts the stack, registers the lab with the matrix's policy (and a case's own fields over it), and joins ctx.others at once. */
export async function startAwsWiring(ctx: CaseContext, options: DeployedStackOptions & { policy?: PolicyInput } = {}): Promise<AwsWiring> {
  const { json: template, assemblyDir } = await synthOnce();
  const { policy, ...stackOptions } = options;
  // Lambda's retry waits of about 1 and 2 minutes compressed to 100 and 200 ms, hops instant: the matrix times its cases, not AWS.
  const stack = await startDeployedStack(template, assemblyDir, { compression: 600, hopLatencyMs: 0, ...stackOptions });
  const calls: CallLog = { memberRemove: [], removed: [], removedAt: [], moveLeader: [] };
  const events: EventEnvelope[] = [];
  let read = 0;
  // Our events as the bus accepted them, in order, the same objects each time they are read.
  const sync = (): EventEnvelope[] => {
    for (; read < stack.eventBridge.accepted.length; read++) {
      const { event } = stack.eventBridge.accepted[read]!;
      const parsed = event.source === EVENT_SOURCE ? parseEvent(event['detail-type'], event.detail) : undefined;
      if (parsed?.ok) events.push(parsed.event);
    }
    return events;
  };
  const watch = watchRemovals(ctx.lab, calls);
  const wiring: AwsWiring = {
    stack,
    store: createDynamoIncidentStore({ client: stack.dynalite.client(), tableName: stack.tableName }),
    get events() {
      return sync();
    },
    calls,
    async remediate(memberName, timeoutMs) {
      const failed = await reportUnhealthy(stack, memberName);
      if (failed > 0) throw new Error(`the report of ${memberName} was refused by PutEvents`);
      return waitFor(async () => sync().find((e): e is TerminalEvent => isTerminalEvent(e)), {
        timeoutMs,
        what: `the incident of ${memberName} to end on the bus`,
      });
    },
    async close() {
      await watch.stop();
      await stack.close();
    },
  };
  ctx.others.push(wiring);
  await registerLab(stack, ctx.lab, { ...labPolicy, ...policy });
  return wiring;
}
