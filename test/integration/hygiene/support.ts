// What the leader-hygiene tests on real etcd share: a lab whose election timeout leaves room for
// CPU starvation in 400 ms stops, a pipeline running the periodic check every second, a writer
// measuring the cluster's write latency, and waits on the check's judgements and the move's end.
import type { EventEnvelope } from '../../../events/catalogue.ts';
import type { HygieneRecord } from '../../../functions/core/hygiene/hygiene-record.ts';
import type { PolicyInput } from '../../../functions/core/policy/policy.ts';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { startLab, type Lab } from '../../../infra/lab/lab.ts';
import { startBackgroundWriter, type BackgroundWriter } from '../../support/background-writer.ts';
import { startPipeline, type Pipeline } from '../e2e/pipeline.ts';

export const CLUSTER = 'lab';

/** etcd's own defaults (100 ms heartbeat, 1 s election): a stop of 300 ms misses heartbeats (> 2 × 100 ms) but calls no election. */
export const LAB_TIMING = { heartbeatMs: 100, electionTimeoutMs: 1_000 } as const;

/** The CPU starvation every test uses: stopped 400 ms, running 100 ms (a stop stays under the 1 s election timeout). */
export const STARVED = { stopMs: 400, runMs: 100 } as const;

/** Minutes made seconds: a check a second, a window of 6 s, no election in the last 4 s, a cooldown far past the test. */
export const hygienePolicy = (hygiene: Record<string, unknown> = {}): PolicyInput => ({
  electionTimeoutMs: LAB_TIMING.electionTimeoutMs,
  callTimeoutMs: 2_000,
  hygiene: {
    enabled: true,
    checkEveryMs: 1_000,
    windowMs: 6_000,
    recentElectionsMs: 4_000,
    cooldownMs: 120_000,
    returnBlockMs: 120_000,
    moveExpiryMs: 10_000,
    // A starved member answers a scrape ~160 ms late on average; a healthy one on loopback in a few.
    thresholds: { heartbeatSamples: 6, heartbeatFailureSamples: 3, stallAnswerMs: 60 },
    ...hygiene,
  },
});

export interface HygieneWorld {
  lab: Lab;
  pipeline: Pipeline;
  writer: BackgroundWriter;
}

export async function startHygieneWorld(policy: PolicyInput, labOptions: { peerProxies?: boolean } = {}): Promise<HygieneWorld> {
  const lab = await startLab({ members: 3, ...LAB_TIMING, ...labOptions });
  try {
    // The load whose fsyncs and commits the members' histograms observe: about 100 puts a second.
    const writer = startBackgroundWriter(
      lab.members.map((m) => m.directUrl),
      { paceMs: 20 },
    );
    const pipeline = await startPipeline(lab, { policy, hygieneChecks: true });
    return { lab, pipeline, writer };
  } catch (error) {
    await lab.down();
    throw error;
  }
}

export async function stopHygieneWorld(world: HygieneWorld | undefined): Promise<void> {
  if (!world) return;
  await world.writer.stop().catch(() => undefined);
  await world.pipeline.close().catch(() => undefined);
  await world.lab.down();
}

export const hygieneRecord = async (world: HygieneWorld): Promise<HygieneRecord | undefined> =>
  (await world.pipeline.runtime.store.hygieneRecord(CLUSTER))?.record;

/** Until a check judges with `reason` at or after `since`; the record's last judgement. */
/** Every judgement the checks made, as the record's last judgement changed (polled), for a failure to say. */
export function judgementLog(world: HygieneWorld): { lines: string[]; stop(): void; failWith(error: unknown): never } {
  const lines: string[] = [];
  let lastAt = 0;
  const timer = setInterval(() => {
    void hygieneRecord(world).then(
      (r) => {
        const j = r?.lastJudged;
        if (j && j.at !== lastAt) {
          lastAt = j.at;
          lines.push(`${new Date(j.at).toISOString().slice(17, 23)} ${j.reason}: ${j.message}`);
        }
      },
      () => undefined,
    );
  }, 100);
  return {
    lines,
    stop: () => clearInterval(timer),
    failWith: (error: unknown): never => {
      throw new Error(`${(error as Error).message}\njudgements:\n${lines.join('\n')}`, { cause: error });
    },
  };
}

export async function untilJudged(
  world: HygieneWorld,
  reasons: readonly string[],
  options: { since?: number; timeoutMs?: number } = {},
): Promise<NonNullable<HygieneRecord['lastJudged']>> {
  const since = options.since ?? 0;
  let last = 'none';
  return waitFor(
    async () => {
      const judged = (await hygieneRecord(world))?.lastJudged;
      if (judged) last = `${judged.reason}: ${judged.message}`;
      return judged && judged.at >= since && reasons.includes(judged.reason) ? judged : undefined;
    },
    { timeoutMs: options.timeoutMs ?? 30_000, intervalMs: 200, what: `a leader-hygiene judgement of ${reasons.join(' or ')} (last: ${last})` },
  ).catch((error: unknown) => {
    throw new Error(`${(error as Error).message}; last judged ${last}`);
  });
}

export const eventsOf = <T extends EventEnvelope['detailType']>(world: HygieneWorld, type: T): EventEnvelope<T>[] =>
  world.pipeline.events.filter((e) => e.detailType === type) as EventEnvelope<T>[];

export async function untilEvent<T extends EventEnvelope['detailType']>(world: HygieneWorld, type: T, timeoutMs = 40_000): Promise<EventEnvelope<T>> {
  return waitFor(async () => eventsOf(world, type)[0], { timeoutMs, intervalMs: 100, what: `a ${type} event` });
}
