// Test support: the four functions driven as AWS drives them, with no recovery sweep. Every event
// is delivered twice; a delivery that throws is delivered again twice more (Lambda's asynchronous
// retries), then handed to stepFailed (the on-failure destination). The scheduler is a map of
// named timers that fire, earliest first, whenever nothing else is queued. All on a manual clock.
import { routes, type EventEnvelope, type FunctionName, workOf } from '../../../events/catalogue.ts';
import type { ClusterDeps } from '../../../functions/app/common/deps.ts';
import { moveLeader } from '../../../functions/app/move/move-leader.ts';
import { deliverToProbeMembers } from '../../support/probe-members.ts';
import { remediate } from '../../../functions/app/removal/remediate.ts';
import { scheduleRetry } from '../../../functions/app/incident/schedule-retry.ts';
import { stepFailed } from '../../../functions/app/incident/step-failed.ts';
import type { ManualClock } from '../../support/manual-clock.ts';
import type { ScheduleRequest } from '../../../functions/ports/scheduler.ts';

export const RETRIES = 2;

export interface Delivery {
  functionName: FunctionName;
  event: EventEnvelope;
}

export interface DriverLog {
  /** Every event accepted by the bus, in order. */
  published: EventEnvelope[];
  /** Deliveries whose every try failed, with the outcome stepFailed gave. */
  exhausted: { functionName: FunctionName; detailType: string; error: string; outcome: string }[];
}

async function handle(deps: ClusterDeps, { functionName, event }: Delivery): Promise<void> {
  switch (functionName) {
    case 'probe-members':
      await deliverToProbeMembers(deps, event as EventEnvelope<'MemberUnhealthy' | 'RetryDue'>);
      return;
    case 'move-leader':
      await moveLeader(deps, (event as EventEnvelope<'MembersProbed'>).detail);
      return;
    case 'schedule-retry':
      await scheduleRetry(deps, (event as EventEnvelope<'RetryRequested'>).detail);
      return;
    case 'remediate':
      await remediate(deps, (event as EventEnvelope<'RemediationApproved'>).detail);
      return;
  }
}

export interface Driver {
  /** Deps whose bus and scheduler feed this driver; wrap them further to inject faults. */
  bus: ClusterDeps['bus'];
  scheduler: ClusterDeps['scheduler'];
  log: DriverLog;
  /**
   * Runs until nothing is queued and no timer is left but the checks of removals awaiting their
   * replacement (which go on for a day after: nothing here replaces a machine), or `maxSteps`
   * deliveries were made.
   */
  run(deps: ClusterDeps, maxSteps?: number): Promise<{ idle: boolean }>;
  timers(): ScheduleRequest[];
}

export function atLeastOnceDriver(clock: ManualClock): Driver {
  const queue: Delivery[] = [];
  const timers = new Map<string, ScheduleRequest>();
  const log: DriverLog = { published: [], exhausted: [] };
  const enqueue = (event: EventEnvelope) => {
    for (const functionName of routes[event.detailType]) {
      // At least once: every event reaches its function twice.
      queue.push({ functionName, event }, { functionName, event });
    }
  };
  return {
    log,
    bus: {
      publish: async (...events) => {
        for (const event of events) {
          log.published.push(event);
          enqueue(event);
        }
      },
    },
    scheduler: {
      schedule: async (request) => {
        timers.set(request.name, request);
      },
      cancel: async (name) => {
        timers.delete(name);
      },
    },
    timers: () => [...timers.values()],
    async run(deps, maxSteps = 400) {
      for (let steps = 0; steps < maxSteps; steps++) {
        let delivery = queue.shift();
        if (!delivery) {
          const next = [...timers.values()].filter((t) => workOf(t.event as EventEnvelope) !== 'check-replacement').sort((a, b) => a.at - b.at)[0];
          if (!next) return { idle: true };
          timers.delete(next.name);
          if (next.at > clock.now()) clock.set(next.at);
          delivery = { functionName: 'probe-members', event: next.event as EventEnvelope };
        }
        await deliver(deps, delivery);
      }
      return { idle: false };
    },
  };

  async function deliver(deps: ClusterDeps, delivery: Delivery): Promise<void> {
    let error: unknown;
    for (let attempt = 0; attempt <= RETRIES; attempt++) {
      try {
        await handle(deps, delivery);
        return;
      } catch (thrown) {
        error = thrown;
        // Lambda waits a minute or two between retries.
        clock.advance(60_000);
      }
    }
    const said = error instanceof Error ? error.message : String(error);
    let outcome: string;
    try {
      outcome = await stepFailed(deps, delivery.functionName, delivery.event, error);
    } catch (failed) {
      outcome = `stepFailed threw: ${failed instanceof Error ? failed.message : String(failed)}`;
    }
    log.exhausted.push({ functionName: delivery.functionName, detailType: delivery.event.detailType, error: said, outcome });
  }
}
