// Write latency through a defragmentation of every member: our maintenance (followers one at a
// time, then leadership moved off the leader, then the old leader) against defragmenting the
// leader in place (as `etcdctl defrag` on the leader would), each on a fragmented 3-member lab of
// its own (LIVE_MIB of live keys, CHURN_MIB written and deleted, the history compacted), with the
// same paced writers running, one pinned to each member as a kubeadm API server is to its local
// etcd, side by side in one run. One line per mode and phase:
//   maintenance mode=<leader-last|in-place> phase=<before|during|after> p50_ms=… p99_ms=…
// A write through the member being defragmented waits for it (etcd answers once it applied the
// write, and a defragmentation holds the apply): what differs is who waits, and for how long.
import { makeEvent } from '../../events/catalogue.ts';
import { createMemberClient } from '../../functions/adapters/etcd/member-client.ts';
import { waitFor } from '../../functions/lib/wait-for.ts';
import { startLab, type Lab } from '../../infra/lab/lab.ts';
import { mergedSpan, startBackgroundWriter, type BackgroundWriter, type WriteLatency } from '../support/background-writer.ts';
import { startPipeline } from '../integration/e2e/pipeline.ts';
import { fragment } from '../support/fragmented-lab.ts';

const MiB = 1024 * 1024;
const LIVE_MIB = Number(process.env.LIVE_MIB ?? 48);
const CHURN_MIB = Number(process.env.CHURN_MIB ?? 96);
const SPAN_MS = 3_000;

/** A lab whose every member holds LIVE_MIB of keys and CHURN_MIB of free pages. */
async function fragmentedLab(): Promise<Lab> {
  const lab = await startLab({ members: 3 });
  await lab.waitForLeader();
  await fragment(lab, { liveMib: LIVE_MIB, churnMib: CHURN_MIB });
  return lab;
}

const line = (mode: string, phase: string, w: WriteLatency): string =>
  `maintenance mode=${mode} phase=${phase} p50_ms=${w.p50Ms.toFixed(1)} p99_ms=${w.p99Ms.toFixed(1)} writes=${w.writes} failed=${w.failed}`;

/** A paced writer pinned to each member. */
const writersOn = (lab: Lab): BackgroundWriter[] => lab.members.map((m) => startBackgroundWriter([m.directUrl], { paceMs: 5, concurrency: 1 }));

/** before, during `act`, after: the writers' spans merged, and how long `act` took. */
async function phases(writers: readonly BackgroundWriter[], act: () => Promise<void>): Promise<{ spans: Record<string, WriteLatency>; tookMs: number }> {
  const pause = () => new Promise((resolve) => setTimeout(resolve, SPAN_MS));
  const mark = () => writers.forEach((w) => w.mark());
  const span = () => mergedSpan(writers.map((w) => w.span()));
  mark();
  await pause();
  const before = span();
  mark();
  const started = performance.now();
  await act();
  const tookMs = performance.now() - started;
  const during = span();
  mark();
  await pause();
  return { spans: { before, during, after: span() }, tookMs };
}

async function leaderLast(lab: Lab): Promise<{ spans: Record<string, WriteLatency>; tookMs: number; steps: string[] }> {
  const policy = { maintenance: { enabled: true, fragmentedShare: 0.3, fragmentedMinBytes: 16 * MiB, defragmentDeadlineMs: 120_000 } };
  const pipeline = await startPipeline(lab, { policy });
  const writers = writersOn(lab);
  try {
    let steps: string[] = [];
    const result = await phases(writers, async () => {
      await pipeline.runtime.bus.publish(makeEvent('MaintenanceDue', { clusterId: 'lab', at: new Date().toISOString(), askedBy: 'bench' }));
      const ended = await waitFor(async () => pipeline.events.find((e) => e.detailType === 'MaintenanceEnded'), {
        timeoutMs: 300_000,
        what: 'the maintenance to end',
      });
      if (ended.detailType !== 'MaintenanceEnded') throw new Error('not a MaintenanceEnded');
      if (ended.detail.outcome !== 'done') throw new Error(`the maintenance ended ${ended.detail.outcome}: ${ended.detail.message}`);
      steps = (ended.detail.evidence.steps as { key: string; tookMs: number }[]).map((s) => `${s.key.replace(/:.*/, '')} ${s.tookMs} ms`);
    });
    return { ...result, steps };
  } finally {
    await Promise.all(writers.map((w) => w.stop()));
    await pipeline.close();
  }
}

async function inPlace(lab: Lab): Promise<{ spans: Record<string, WriteLatency>; tookMs: number }> {
  const writers = writersOn(lab);
  try {
    const leader = await lab.leader();
    return await phases(writers, async () => {
      const client = createMemberClient({ endpoint: leader.directUrl, path: 'direct' });
      try {
        await client.defragment!(120_000);
      } finally {
        client.close();
      }
    });
  } finally {
    await Promise.all(writers.map((w) => w.stop()));
  }
}

async function main(): Promise<void> {
  console.log(`3 members, ${LIVE_MIB} MiB live and ${CHURN_MIB} MiB free on each, a write every 5 ms through each member, spans of ${SPAN_MS} ms`);
  const labs = [await fragmentedLab(), await fragmentedLab()];
  try {
    const ours = await leaderLast(labs[0]!);
    const theirs = await inPlace(labs[1]!);
    for (const phase of ['before', 'during', 'after']) console.log(line('leader-last', phase, ours.spans[phase]!));
    for (const phase of ['before', 'during', 'after']) console.log(line('in-place', phase, theirs.spans[phase]!));
    console.log(
      `leader-last: every member in ${Math.round(ours.tookMs)} ms (${ours.steps.join(', ')}); in-place: the leader alone in ${Math.round(theirs.tookMs)} ms`,
    );
    // What a stall costs: the writes that waited past 100 ms, and how long they waited in all.
    const stalled = (w: WriteLatency) => w.latenciesMs.filter((ms) => ms > 100);
    const stallMs = (w: WriteLatency) => Math.round(stalled(w).reduce((sum, ms) => sum + ms, 0));
    for (const [mode, r] of [
      ['leader-last', ours],
      ['in-place', theirs],
    ] as const)
      console.log(
        `${mode}: ${stalled(r.spans.during!).length} of ${r.spans.during!.writes} writes waited over 100 ms during, ${stallMs(r.spans.during!)} ms in all; ${r.spans.during!.failed} failed`,
      );
  } finally {
    await Promise.all(labs.map((lab) => lab.down()));
  }
}

await main();
