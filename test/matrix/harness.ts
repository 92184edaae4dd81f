// The fault matrix's harness: one case on a real lab through the handlers and the embedded runtime
// (startPipeline), with the quorum checker running the whole time. It returns the matrix row and
// every assertion that failed, as sentences; the runner (run-matrix.ts) and the vitest file
// (matrix.test.ts) both run cases through runCase and judge the same rows.
import type { EventEnvelope } from '../../events/catalogue.ts';
import { endingOfEvent } from '../../functions/core/incident/incident-endings.ts';
import type { PolicyInput } from '../../functions/core/policy/policy.ts';
import type { TlsFiles } from '../../functions/ports/etcd.ts';
import { waitFor } from '../../functions/lib/wait-for.ts';
import { startLab, type Lab, type LabMember } from '../../infra/lab/lab.ts';
import type { TerminalEvent } from '../../infra/runtime/runtime.ts';
import { startPipeline, type CallLog, type Pipeline } from '../integration/e2e/pipeline.ts';
import { startQuorumChecker, type QuorumChecker, type QuorumVerdict } from '../support/quorum-checker.ts';

/** removed (RemediationCompleted), blocked, recovered or closed (RemediationClosed), failed; a case with several incidents joins them with '+'. */
export type Outcome = string;

export interface Arranged {
  /** The member each incident is reported for, in order. */
  targets: LabMember[];
  /** Other members a case refers to in its checks (the dead one, the learner, ...). */
  roles?: Record<string, LabMember>;
  /** Undone after the case, passed or not (a SIGSTOPped member is continued). */
  cleanup?: () => void | Promise<void>;
}

/**
 * A remediator the harness counts: its events and the etcd calls it sent. The embedded pipeline is
 * one; a case may add others that run elsewhere (a child process, the deployed-stack sim), whose
 * events and calls it records itself.
 */
export interface Remediator {
  events: EventEnvelope[];
  calls: CallLog;
  close(): Promise<void>;
}

export interface CaseContext {
  lab: Lab;
  pipeline: Pipeline;
  /** More remediators on the same cluster a case starts (separate state files): counted and closed with the first. */
  others: Remediator[];
  checker: QuorumChecker;
  arranged: Arranged;
}

export interface Checked {
  outcomes: TerminalEvent[];
  /** The event whose reason and message decided the (last) incident: its final event, or for a removal its approval. */
  deciding: { reason: string; message: string; evidence: Record<string, unknown> };
}

export interface MatrixCase {
  /** Issue 10 §1 case number. */
  n: number;
  name: string;
  members: 3 | 5;
  expected: Outcome;
  reason: string;
  /** Other reason codes as good as `reason`, where a race between remediators decides which one says it. */
  alsoReasons?: string[];
  /** Runs in `npm test` too (the fast subset); every case runs in `npm run matrix`. */
  fast?: boolean;
  policy?: PolicyInput;
  timeoutMs?: number;
  /** Another cluster than a plain startLab one (the mTLS lab, a lab behind a Kubernetes fake), with what the checker and the pipeline need. */
  start?(): Promise<StartedCluster>;
  arrange(lab: Lab, checker: QuorumChecker): Promise<Arranged>;
  /** Reports the targets; by default each in turn, one at a time. */
  act?(ctx: CaseContext): Promise<TerminalEvent[]>;
  /** Problems with what happened, as sentences; empty when all is as the case expects. */
  verify(ctx: CaseContext, checked: Checked): Promise<string[]> | string[];
}

export interface StartedCluster {
  lab: Lab;
  checkerTls?: TlsFiles;
  pipelineTls?: TlsFiles;
  /** More options for the embedded pipeline (kube access, an actuator, other endpoints). */
  pipelineOptions?: Omit<NonNullable<Parameters<typeof startPipeline>[1]>, 'policy' | 'tls'>;
  /** Tears down what start() started beside the lab (after the lab is down). */
  down?(): Promise<void>;
}

export interface CaseRow {
  name: string;
  members: number;
  expected: Outcome;
  actual: Outcome;
  reason: string;
  ms: number;
  quorum: QuorumVerdict['quorum'];
  /** Accepted MemberRemove calls. */
  removals: number;
  /** MemberRemove calls sent, refused ones included. */
  sent?: number;
  /** RetryRequested events by reason, e.g. "ETCD_TRANSIENT×12". */
  retries?: string;
  /** The deciding message of each incident. */
  messages?: string[];
  problems: string[];
  verdict?: QuorumVerdict;
}

/** The endings table's word for the event, as the matrix says it: removed, and recovered for a close that healed by itself. */
export function outcomeOf(e: TerminalEvent): string {
  const ending = endingOfEvent(e.detailType, 'reason' in e.detail ? e.detail.reason : undefined);
  return ending.state === 'awaiting-replacement' ? 'removed' : ending.phase === 'Recovered' ? 'recovered' : ending.outcome;
}

const detailOf = (e: EventEnvelope): { reason?: string; message?: string; evidence?: Record<string, unknown>; incidentId?: string } =>
  e.detail as { reason?: string; incidentId?: string };

/** The first approval (for a removal) or the final event's own explanation. */
export function decidingOf(pipeline: Remediator, outcome: TerminalEvent): Checked['deciding'] {
  const d = detailOf(outcome);
  if (outcome.detailType === 'RemediationCompleted') {
    // The first approval chose the way out (move, skip, follower); a re-approval after a refused
    // MemberRemove re-probes and may find the moved-off leader a follower by then.
    const approved = pipeline.events.find((e) => e.detailType === 'RemediationApproved' && detailOf(e).incidentId === d.incidentId);
    const a = approved ? detailOf(approved) : {};
    return { reason: a.reason ?? '?', message: a.message ?? '', evidence: a.evidence ?? {} };
  }
  return { reason: d.reason ?? '?', message: d.message ?? '', evidence: d.evidence ?? {} };
}

/** Messages of the RetryRequested events with a reason, in order. */
export const retriesWith = (pipeline: Remediator, reason: string): string[] =>
  pipeline.events.flatMap((e) => (e.detailType === 'RetryRequested' && detailOf(e).reason === reason ? [detailOf(e).message ?? ''] : []));

/** "host:port" of a client URL, as the messages name a path. */
export const hostOf = (url: string): string => url.replace(/^https?:\/\//, '');

/** A problem when `text` lacks any of `words`. */
export function says(what: string, text: string, words: string[]): string[] {
  const missing = words.filter((w) => !text.includes(w));
  return missing.length === 0 ? [] : [`${what} does not name ${missing.join(', ')}: ${JSON.stringify(text.slice(0, 400))}`];
}

export function check(ok: boolean, problem: string): string[] {
  return ok ? [] : [problem];
}

async function defaultAct(ctx: CaseContext, timeoutMs: number): Promise<TerminalEvent[]> {
  const outcomes: TerminalEvent[] = [];
  for (const target of ctx.arranged.targets) outcomes.push(await ctx.pipeline.remediate(target.name, timeoutMs));
  return outcomes;
}

/** A path by its name, or an endpoint: what "names the path" means for a message. */
const PATH_WORDS = /\b(direct|port-forward|exec)\b|https?:\/\/|\b127\.0\.0\.1:\d+/;

export async function runCase(c: MatrixCase, options: { log?: (line: string) => void } = {}): Promise<CaseRow> {
  const row: CaseRow = {
    name: c.name,
    members: c.members,
    expected: c.expected,
    actual: 'error',
    reason: '-',
    ms: 0,
    quorum: 'held',
    removals: 0,
    problems: [],
  };
  const cluster = c.start ? await c.start() : { lab: await startLab({ members: c.members }) };
  const { lab } = cluster;
  let pipeline: Pipeline | undefined;
  const others: Remediator[] = [];
  let arranged: Arranged | undefined;
  const checker = startQuorumChecker({
    members: () => lab.members.filter((m) => !m.isLearner),
    skip: (name) => lab.runState(name) !== 'running' || [pipeline, ...others].some((p) => p?.calls.removed.includes(lab.member(name).id)),
    electionTimeoutMs: lab.electionTimeoutMs,
    ...(cluster.checkerTls ? { tls: cluster.checkerTls } : {}),
  });
  const started = Date.now();
  let verdict: QuorumVerdict | undefined;
  try {
    arranged = await c.arrange(lab, checker);
    pipeline = await startPipeline(lab, {
      ...cluster.pipelineOptions,
      ...(c.policy ? { policy: c.policy } : {}),
      ...(cluster.pipelineTls ? { tls: cluster.pipelineTls } : {}),
    });
    const ctx: CaseContext = { lab, pipeline, others, checker, arranged };
    const timeoutMs = c.timeoutMs ?? 45_000;
    const outcomes = await (c.act ? c.act(ctx) : defaultAct(ctx, timeoutMs));
    row.ms = Date.now() - started;
    // A removal that cost the quorum never heals: keep checking until a sample starts two
    // allowances from now, so such a window outgrows the allowance before the verdict.
    const calls = [pipeline, ...others].map((p) => p.calls);
    if (calls.some((c) => c.removed.length > 0)) {
      const through = Date.now() + 2 * 3 * lab.electionTimeoutMs;
      await waitFor(async () => ((checker.samples.at(-1)?.at ?? 0) >= through ? true : undefined), {
        timeoutMs: through - Date.now() + 10_000,
        what: 'the quorum checker to sample two allowances past the outcome',
      });
    }
    row.actual = outcomes.map(outcomeOf).join('+');
    const last = outcomes.at(-1)!;
    const deciding = decidingOf([pipeline, ...others].find((p) => p.events.includes(last)) ?? pipeline, last);
    const all = [pipeline, ...others];
    // Each outcome explained by the remediator whose events carry it.
    const explained = outcomes.map((o) => decidingOf(all.find((p) => p.events.includes(o)) ?? pipeline!, o));
    row.reason = explained.map((d) => d.reason).join('+');
    row.messages = explained.map(
      (d) => `${d.message} [evidence: ${Object.keys(d.evidence).join(',')}; gate ${JSON.stringify(d.evidence.gate ?? null).slice(0, 200)}]`,
    );
    // Every case: at most one MemberRemove per target that etcd accepted, and none ever sent for a
    // member no incident named. (Sends etcd refused, e.g. "unhealthy cluster" in the seconds after
    // a member connects, are retried: they changed nothing, and are counted in row.sent.)
    const removed = calls.flatMap((c) => c.removed);
    const perId = new Map<string, number>();
    for (const id of removed) perId.set(id, (perId.get(id) ?? 0) + 1);
    for (const [id, count] of perId) if (count > 1) row.problems.push(`etcd accepted MemberRemove ${count} times for ${id}`);
    const targetIds = new Set(arranged.targets.map((t) => t.id));
    for (const id of new Set(calls.flatMap((c) => c.memberRemove)))
      if (!targetIds.has(id)) row.problems.push(`MemberRemove sent for ${id}, which no incident named`);
    row.sent = calls.reduce((n, c) => n + c.memberRemove.length, 0);
    const retried = new Map<string, number>();
    for (const e of all.flatMap((p) => p.events))
      if (e.detailType === 'RetryRequested') retried.set(String(detailOf(e).reason), (retried.get(String(detailOf(e).reason)) ?? 0) + 1);
    row.retries = [...retried].map(([r, n]) => `${r}×${n}`).join(',') || 'none';
    row.removals = removed.length;
    const reasons = [c.reason, ...(c.alsoReasons ?? [])];
    row.problems.push(...check(reasons.includes(row.reason), `reason ${row.reason}, expected ${reasons.join(' or ')}`));
    // Every decision carries its evidence: a removal the quorum gate's pass, a gate's block its verdict.
    outcomes.forEach((o, i) => {
      const d = explained[i]!;
      const gate = d.evidence.gate as { reason?: string } | undefined;
      row.problems.push(...check(Object.keys(d.evidence).length > 0, `${d.reason} carries no evidence`));
      if (o.detailType === 'RemediationCompleted')
        row.problems.push(...check(gate?.reason === 'QUORUM_SAFE', `removal approved with evidence.gate ${JSON.stringify(gate)}`));
      if (['QUORUM_AT_RISK', 'NO_QUORUM', 'MEMBER_NOT_READY'].includes(d.reason))
        row.problems.push(...check(gate?.reason === d.reason, `${d.reason} with evidence.gate ${JSON.stringify(gate)}`));
    });
    // Every outcome names its member and how it was (or was not) reached: the issue's "a message
    // that names the member and the path", for every row, beside each row's own checks.
    outcomes.forEach((o, i) => {
      const target = arranged?.targets[i];
      const said = explained[i]!.message;
      if (!target) return;
      row.problems.push(...says(`${o.detailType} ${explained[i]!.reason}`, said, [target.name]));
      row.problems.push(...check(PATH_WORDS.test(said), `${explained[i]!.reason} names no path: ${JSON.stringify(said.slice(0, 300))}`));
    });
    row.problems.push(...(await c.verify(ctx, { outcomes, deciding })));
    if (row.actual !== c.expected) row.problems.push(`outcome: ${outcomes.map((o) => JSON.stringify(o.detail).slice(0, 600)).join(' | ')}`);
  } catch (error) {
    row.ms = Date.now() - started;
    row.problems.push(`error: ${(error as Error).message.split('\n').slice(0, 3).join(' ')}`);
  } finally {
    verdict = await checker.stop();
    row.quorum = verdict.quorum;
    row.verdict = verdict;
    if (verdict.quorum === 'LOST') row.problems.push(verdict.summary);
    try {
      await arranged?.cleanup?.();
      for (const other of others) await other.close().catch(() => undefined);
      await pipeline?.close();
    } finally {
      try {
        await lab.down();
      } finally {
        await cluster.down?.();
      }
    }
  }
  options.log?.(`  quorum: ${verdict.summary}`);
  return row;
}

export const formatRow = (r: CaseRow): string =>
  `case ${r.name} members=${r.members} expected=${r.expected} actual=${r.actual} reason=${r.reason} ms=${r.ms} quorum=${r.quorum} removals=${r.removals}`;

/** A row is as expected when its outcome matches and no assertion failed. */
export const asExpected = (r: CaseRow): boolean => r.actual === r.expected && r.problems.length === 0;

/** Marks [now, until the lab agrees on a leader other than `excluding`] as unavailability the case injected. */
export async function injectedUntilLeader(lab: Lab, checker: QuorumChecker, from: number, excluding: string[]): Promise<LabMember> {
  const leader = await lab.waitForLeader({ excluding, timeoutMs: 10_000 });
  checker.injected(from, Date.now());
  return leader;
}
