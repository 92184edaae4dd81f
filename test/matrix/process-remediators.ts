// Remediators that run as processes of the real binary, each with a state file of its own: the
// `run` service and a one-shot CLI `remediate`. The harness counts what each did from two sources:
//   events: the outcome the process itself printed (the service's stdout line for the incident it
//     accepted, the CLI's --json), and for a removal the approval its journal holds;
//   calls: MemberRemove sent and accepted, from its state file's journal, read after it ended.
// While they run, nothing of theirs can be read yet, so watchRemoval marks the target removed as
// soon as etcd's member list loses it: the quorum checker must stop asking a removed member.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { isTerminalEvent, type DetailType, type EventEnvelope } from '../../events/catalogue.ts';
import { parseEvent } from '../../events/validate.ts';
import { endingOfOutcome } from '../../functions/core/incident/incident-endings.ts';
import { isDecisionLine, isLine, journalSteps, type JournalEntry } from '../../functions/core/incident/journal.ts';
import { WaitAborted, waitFor } from '../../functions/lib/wait-for.ts';
import type { Lab } from '../../infra/lab/lab.ts';
import type { CliResult } from '../../infra/cli/output.ts';
import { openSqliteStore } from '../../functions/adapters/local/sqlite-store.ts';
import type { TerminalEvent } from '../../infra/runtime/runtime.ts';
import type { CallLog } from '../integration/e2e/pipeline.ts';
import { jsonOf, killService, startCli, type Service } from '../integration/cli/support.ts';
import type { Remediator } from './harness.ts';

/** The lab's timing, as its labs are run by hand: etcd's ~5 s refusal after boot is retried promptly. */
const LAB_FLAGS = ['--election-timeout', '500ms', '--timeout', '1s', '--backoff', '300ms'];
/** The same in a `run` config; the cap is the one remediate gives a 300ms backoff. */
const LAB_POLICY = { electionTimeout: '500ms', callTimeout: '1s', backoff: { base: '300ms', cap: '30s' } };
const OUTCOME_MS = 40_000;

export interface ProcessRemediator extends Remediator {
  /** "run service (pid N, state F)", for problems. */
  label: string;
  statePath: string;
  pid?: number;
}

const emptyCalls = (): CallLog => ({ memberRemove: [], removed: [], removedAt: [], moveLeader: [] });

/** Its events and calls, filled by settle(); closing it kills the process if it still runs. */
function remediatorAt(what: string, statePath: string, close: () => Promise<void>): ProcessRemediator {
  const self: ProcessRemediator = {
    events: [],
    calls: emptyCalls(),
    statePath,
    get label() {
      return `${what} (pid ${self.pid ?? '?'}, state ${path.basename(statePath)})`;
    },
    close,
  };
  return self;
}

/** A detail checked against the catalogue's schema, so a field the process printed wrongly fails the row. */
function eventOf(detailType: DetailType, detail: Record<string, unknown>): EventEnvelope {
  const parsed = parseEvent(detailType, detail);
  if (!parsed.ok) throw new Error(`${parsed.error.summary} (from ${JSON.stringify(detail).slice(0, 300)})`);
  return parsed.event;
}

/** A decision removeMember made after etcd refused the call (member-removal.ts's messages). */
const REFUSED = /: (etcd refused removing|Removing .* (was refused by|failed on)) /;

/**
 * What the process did, from its state file after it ended: exactly one incident, the one it
 * reported; its calls from the journal (a decision made after several paths refused counts as one
 * send, so `memberRemove` is a lower bound; `removed` is exact); its outcome as an event, after the
 * approval for a removal. Returns the terminal event.
 */
export async function settle(r: ProcessRemediator, result: CliResult): Promise<TerminalEvent> {
  const store = openSqliteStore({ path: r.statePath, readOnly: true });
  let journal: JournalEntry[];
  let attempt: number;
  let selector: Record<string, string>;
  try {
    const incidents = await store.listIncidents();
    const ids = incidents.map((i) => i.incidentId);
    if (ids.length !== 1 || ids[0] !== result.incidentId)
      throw new Error(`${r.label} reported incident ${result.incidentId}, but its state file holds ${ids.join(', ') || 'none'}`);
    journal = await store.journal(result.incidentId);
    attempt = incidents[0]!.attempt;
    selector = incidents[0]!.target;
  } finally {
    await store.close();
  }
  // MemberRemove answered, as removeStep marks it: accepted, or "member not found" (already gone).
  const answered = journal.flatMap((e) => (e.isStepMarker && isLine(e, journalSteps.memberRemoved) && 'via' in e.detail ? [e.detail] : []));
  const refused = journal.filter((e) => isDecisionLine(e) && (e.step === 'remediate:retry' || e.step === 'remediate:block') && REFUSED.test(e.detail.message));
  const memberId = result.target.memberId;
  Object.assign(r.calls, {
    memberRemove: [...answered, ...refused].map(() => memberId),
    removed: answered.filter((d) => !d.alreadyGone).map(() => memberId),
    removedAt: [],
    moveLeader: journal.filter((e) => e.isStepMarker && e.step === 'leader-moved').map(() => memberId),
  });

  const envelope = { incidentId: result.incidentId, clusterId: result.clusterId, attempt, at: result.timeline.at(-1)?.at ?? new Date().toISOString() };
  r.events.push(...retriesIn(journal, envelope));
  if (result.outcome === 'awaiting-replacement') {
    // The approval the removal went ahead on: the last journaled, whose reason and evidence the
    // printed result carries (result.ts).
    const approval = journal
      .flatMap((e) => (isDecisionLine(e) && e.step.endsWith(':approve') && e.detail.reason !== 'RUNTIME_RESUMED' ? [e.detail] : []))
      .at(-1);
    const { reason, message } = approval ?? {};
    if (!reason || !message || reason !== result.reason)
      throw new Error(`${r.label} removed ${result.target.name} for ${result.reason}, but its journal's last approval says ${reason ?? 'nothing'}`);
    const { newLeader, ...evidence } = result.evidence as { newLeader?: { id?: string; name?: string } };
    r.events.push(eventOf('RemediationApproved', { ...envelope, target: result.target, leaderMove: result.leaderMove, reason, message, evidence }));
    r.events.push(
      eventOf('RemediationCompleted', {
        ...envelope,
        target: result.target,
        leaderMove: result.leaderMove,
        newLeader: { id: newLeader?.id ?? '0', name: newLeader?.name ?? '' },
        timeline: result.timeline,
      }),
    );
  } else if (result.outcome !== 'planned') {
    const target = {
      ...selector,
      ...(result.target.memberId === '0' ? {} : { memberId: result.target.memberId }),
      ...(result.target.name ? { name: result.target.name } : {}),
    };
    r.events.push(
      eventOf(endingOfOutcome(result.outcome).detailType, { ...envelope, target, reason: result.reason, message: result.message, evidence: result.evidence }),
    );
  }
  const last = r.events.at(-1);
  if (!last || !isTerminalEvent(last)) throw new Error(`${r.label} printed no outcome: ${JSON.stringify(result).slice(0, 300)}`);
  return last;
}

/**
 * The retries it asked for, from the journal: each decision line and the attempt the schedule made
 * of it. reprobeNow is not journaled: a schedule due no later than it was written is taken for one.
 */
function retriesIn(journal: JournalEntry[], base: { incidentId: string; clusterId: string }): EventEnvelope[] {
  return journal.flatMap((e, i) => {
    const from = e.step === 'move-leader:retry' ? 'move-leader' : e.step === 'remediate:retry' ? 'remediate' : undefined;
    if (!from || !isDecisionLine(e)) return [];
    const { reason, message } = e.detail;
    const scheduled = journal.slice(i + 1).find((s) => isLine(s, journalSteps.retryScheduled));
    const schedule = scheduled && isLine(scheduled, journalSteps.retryScheduled) ? scheduled.detail : undefined;
    const at = new Date(e.at).toISOString();
    const due = schedule?.at ?? at;
    const detail = {
      ...base,
      attempt: Math.max(0, (schedule?.attempt ?? 1) - 1),
      at,
      retryAt: due,
      reason,
      message,
      reprobeNow: Date.parse(due) <= (scheduled?.at ?? e.at),
      from,
    };
    return [eventOf('RetryRequested', detail)];
  });
}

/**
 * Its own process holds its own state file (the owner lease in the file names the child's pid), or
 * it is not the remediator the case says it is: not this process, and not a file another shares.
 */
function checkOwner(r: ProcessRemediator): void {
  const db = new DatabaseSync(r.statePath, { readOnly: true });
  let holder: number | undefined;
  try {
    holder = (db.prepare('SELECT pid FROM state_owner WHERE id = 1').get() as { pid?: number } | undefined)?.pid;
  } finally {
    db.close();
  }
  if (holder === undefined || holder !== r.pid || holder === process.pid) throw new Error(`${r.label}: its state file is held by pid ${holder ?? 'none'}`);
}

export interface RunService extends ProcessRemediator {
  /** POSTs MemberUnhealthy for the member and waits for the outcome line of the incident it accepted. */
  report(memberName: string): Promise<CliResult>;
  /** SIGTERM, and its exit code once it has stopped cleanly. */
  stop(): Promise<number | null>;
}

/** A wait that says, when it fails, what the process had said on stderr by then. */
const saying = <T>(wait: Promise<T>, process: Service): Promise<T> =>
  wait.catch((error: unknown) => {
    throw new Error(`${error instanceof Error ? error.message : String(error)}; its stderr:\n${process.stderr().slice(-1500)}`);
  });

/** The `run` service on the lab, listening on a loopback port with a bearer token, its state in `dir`. */
export async function startRunService(lab: Lab, dir: string, clusterId: string): Promise<RunService> {
  const token = randomBytes(16).toString('hex');
  const config = path.join(dir, 'run.json');
  fs.writeFileSync(
    config,
    JSON.stringify({ state: 'run.sqlite', listen: '127.0.0.1:0', token, clusters: [{ clusterId, endpoints: lab.endpoints(), policy: LAB_POLICY }] }),
    { mode: 0o600 },
  );
  const service = startCli(['run', '--config', config]);
  const base = remediatorAt('run service', path.join(dir, 'run.sqlite'), () => killService(service));
  base.pid = service.child.pid;
  let url: string;
  try {
    url = (await service.waitForStderr(/listening on (http:\/\/127\.0\.0\.1:\d+\/events)/))[1]!;
    checkOwner(base);
  } catch (error) {
    await killService(service);
    throw error;
  }

  const report = async (memberName: string): Promise<CliResult> => {
    const now = new Date().toISOString();
    const body = JSON.stringify({ clusterId, target: { memberName }, reason: 'matrix case 18', source: 'matrix', observedAt: now });
    const response = await fetch(url, { method: 'POST', body, headers: { authorization: `Bearer ${token}` } });
    const answer = (await response.json()) as { accepted?: boolean; incidentId?: string };
    if (response.status !== 202 || !answer.incidentId) throw new Error(`${base.label} answered ${response.status} ${JSON.stringify(answer)}`);
    // One JSON line per outcome on stdout; ours is the one with the incident it accepted.
    const printed = () =>
      service
        .stdout()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as CliResult)
        .find((r) => r.incidentId === answer.incidentId);
    return saying(
      waitFor(async () => printed(), { timeoutMs: OUTCOME_MS, intervalMs: 100, what: `${base.label} to print the outcome of ${answer.incidentId}` }),
      service,
    );
  };
  const stop = async () => {
    service.child.kill('SIGTERM');
    return service.exited;
  };
  return Object.assign(base, { report, stop });
}

export interface CliRemediate extends ProcessRemediator {
  /** Spawns `remediate --json`; resolves once it owns its state file, about to report the member. */
  start(memberName: string): Promise<void>;
  /** What it printed, and its exit code, once it has ended. */
  finished(): Promise<{ result: CliResult; code: number | null }>;
}

/** A one-shot CLI `remediate` on the lab, its state file in `dir`; closing it kills it if it still runs. */
export function cliRemediate(lab: Lab, dir: string, clusterId: string): CliRemediate {
  let cli: Service | undefined;
  const base = remediatorAt('CLI remediate', path.join(dir, 'cli.sqlite'), () => killService(cli));
  const started = (): Service => {
    if (!cli) throw new Error(`${base.label} was never started`);
    return cli;
  };
  const start = async (memberName: string): Promise<void> => {
    const args = [
      'remediate',
      '--endpoints',
      lab.endpoints().join(','),
      '--cluster',
      clusterId,
      ...LAB_FLAGS,
      '--target',
      memberName,
      '--state',
      base.statePath,
      '--json',
    ];
    const child = (cli = startCli(args));
    base.pid = child.child.pid;
    // Said once it owns the file, before it looks up the member and reports it to its runtime.
    const owns = async () => {
      if (/^state: /m.test(child.stderr())) return true;
      if (child.child.exitCode !== null) throw new WaitAborted(`${base.label} exited ${child.child.exitCode}`);
      return undefined;
    };
    await saying(waitFor(owns, { timeoutMs: 15_000, what: `${base.label} to take its state file` }), child);
    checkOwner(base);
  };
  const finished = async () => {
    const child = started();
    const ended = async () => (child.child.exitCode === null && child.child.signalCode === null ? undefined : true);
    await saying(waitFor(ended, { timeoutMs: OUTCOME_MS, intervalMs: 100, what: `${base.label} to end` }), child);
    const code = await child.exited;
    return { result: jsonOf<CliResult>({ code, stdout: child.stdout(), stderr: child.stderr() }), code };
  };
  return Object.assign(base, { start, finished });
}

/**
 * Until stopped: once etcd's member list has lost `memberId`, it is marked removed in each
 * remediator's calls, for the quorum checker's sake. settle() replaces these marks with what each
 * journal says, so the row counts removals from the journals alone.
 */
export function watchRemoval(lab: Lab, memberId: string, remediators: Remediator[]): { stop(): Promise<void> } {
  let stopped = false;
  const watching = waitFor(
    async () => {
      if (stopped) return true;
      if ((await lab.memberList(500)).some((m) => m.id === memberId)) return undefined;
      for (const r of remediators) r.calls.removed.push(memberId);
      return true;
    },
    { timeoutMs: 2 * OUTCOME_MS, intervalMs: 50, what: `etcd's member list to lose ${memberId}` },
  ).catch(() => true);
  return {
    stop: async () => {
      stopped = true;
      await watching;
    },
  };
}
