// Crash at every step boundary: for each failpoint, a real CLI process on a real 3-member lab kills
// itself (SIGKILL) right after the step is journaled; a fresh process on the same state file
// resumes the incident. It must complete with one member removed and one actuator call, and leave
// the cluster lock in etcd released, also when the dead holder's lease had to expire first.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RemovalRecord } from '../../../functions/core/replacement/replacement.ts';
import type { JournalEntry } from '../../../functions/ports/incident-store.ts';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { withTimeout } from '../../../functions/lib/with-timeout.ts';
import { FAILPOINT_ENV, FAILPOINTS, type Failpoint } from '../../../infra/runtime/failpoint.ts';
import { openSqliteStore } from '../../../functions/adapters/local/sqlite-store.ts';
import { startLab, type Lab, type LabMember } from '../../../infra/lab/lab.ts';
import { jsonOf, killService, runCli, startCli, type Service } from '../cli/support.ts';

const LOCK = '/etcd-remediator/lock';
const REMOVALS = '/etcd-remediator/removals';
// etcd refuses reconfiguration for ~5 s after start ("unhealthy cluster"): a short backoff retries it promptly.
const LAB_FLAGS = ['--election-timeout', '500ms', '--timeout', '1s', '--backoff', '300ms'];
const LAB_POLICY = { electionTimeout: '500ms', callTimeout: '1s', grace: '2s', backoff: { base: '300ms', cap: '2s' } };

interface Case {
  failpoint: Failpoint;
  /** The leader for the failpoints that need a move; a follower for the rest, so each case is short. */
  target: 'leader' | 'follower';
  /** `run` with a 2 s lockLease (the CLI's remediate keeps the 30 s default): its lease lapses before the resume. */
  crashIn: 'remediate' | 'run';
  snapshot?: boolean;
  /** The dead process held the cluster lock. */
  holdsLock: boolean;
}

const CASES: Case[] = [
  { failpoint: 'probed', target: 'follower', crashIn: 'remediate', holdsLock: false },
  { failpoint: 'leader-move-made', target: 'leader', crashIn: 'remediate', holdsLock: false },
  { failpoint: 'leader-moved', target: 'leader', crashIn: 'remediate', holdsLock: false },
  { failpoint: 'lock-taken', target: 'follower', crashIn: 'remediate', holdsLock: true },
  { failpoint: 'snapshot-taken', target: 'follower', crashIn: 'run', snapshot: true, holdsLock: true },
  { failpoint: 'member-removed', target: 'follower', crashIn: 'run', holdsLock: true },
  { failpoint: 'leader-elected', target: 'follower', crashIn: 'remediate', holdsLock: true },
  { failpoint: 'actuator-called', target: 'follower', crashIn: 'remediate', holdsLock: true },
  { failpoint: 'lock-released', target: 'follower', crashIn: 'remediate', holdsLock: false },
];

/** At most this many cases (three etcd processes and a CLI each) at once: two cores, shared. */
const PARALLEL = 3;
/** Runs one case at a time; `spare` is the lab it started for the next case it runs. */
interface Slot {
  spare?: Promise<Lab>;
}
const freeSlots: Slot[] = Array.from({ length: PARALLEL }, () => ({}));
const queue: ((slot: Slot) => void)[] = [];
async function inSlot<T>(work: (slot: Slot) => Promise<T>): Promise<T> {
  const slot = freeSlots.pop() ?? (await new Promise<Slot>((resolve) => queue.push(resolve)));
  try {
    return await work(slot);
  } finally {
    const next = queue.shift();
    if (next) next(slot);
    else freeSlots.push(slot);
  }
}

async function readKey<T>(urls: string[], key: string): Promise<T | undefined> {
  const client = new Etcd3({ hosts: urls, dialTimeout: 1_000 });
  try {
    const text = await client.get(key).string();
    return text === null ? undefined : (JSON.parse(text) as T);
  } finally {
    client.close();
  }
}

async function journalOf(state: string): Promise<{ incidentId: string; state: string; journal: JournalEntry[] }> {
  const store = openSqliteStore({ path: state, readOnly: true });
  try {
    const incidents = await store.listIncidents();
    expect(incidents, 'one incident in the state file').toHaveLength(1);
    const [incident] = incidents;
    return { incidentId: incident!.incidentId, state: incident!.state, journal: await store.journal(incident!.incidentId) };
  } finally {
    await store.close();
  }
}

/** The promise's value, or a failure saying what did not happen in time. */
const within = <T>(promise: Promise<T>, timeoutMs: number, what: () => string): Promise<T> =>
  withTimeout(
    timeoutMs,
    () => promise,
    () => new Error(`${what()}: not within ${timeoutMs} ms`),
  );

/** Whether the crash came where the case wants it. */
const landed = (c: Case, journal: JournalEntry[]): boolean => c.failpoint !== 'lock-released' || journal.some((e) => e.step === 'actuator-called');

const count = (journal: JournalEntry[], step: string) => journal.filter((e) => e.step === step).length;

describe('crash at every step boundary', () => {
  let root: string;
  const labs: Lab[] = [];
  const services: Service[] = [];
  beforeAll(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'crash-failpoints-'));
  });
  // Every case has a member removed a few seconds after its lab is up, by the crashed process or
  // the resumed one, and etcd refuses that for 5 s after start (e2e/started-ahead.ts says why). So
  // a slot starts the lab of its next case before it runs this one, and that lab has served those
  // seconds by the time the case takes it: one spare per slot at most, none for cases not to come.
  // The case waits for the spare to be up, so that no boot runs beside its first steps.
  let labsOwed = CASES.length;
  const spares = new Set<Promise<Lab>>();
  async function labFor(slot: Slot): Promise<Lab> {
    const spare = slot.spare;
    delete slot.spare;
    if (spare) spares.delete(spare);
    labsOwed -= 1;
    const taking = spare ?? startLab({ members: 3, electionTimeoutMs: 500, dataRoot: root });
    // A slot's first case, with no spare to take, starts its own lab and the spare side by side: a
    // boot is mostly waiting on an election, so two at once are one wait, not two.
    let next: Promise<Lab> | undefined;
    if (labsOwed > spares.size) {
      next = startLab({ members: 3, electionTimeoutMs: 500, dataRoot: root });
      spares.add(next);
      slot.spare = next;
      // Its failure is the next case's, not this one's.
      next.catch(() => undefined);
    }
    const lab = await taking;
    labs.push(lab);
    await next?.catch(() => undefined);
    return lab;
  }
  afterAll(async () => {
    for (const service of services) await killService(service);
    const unused = [...spares].map((spare) =>
      spare.then(
        (lab) => lab.down(),
        () => undefined,
      ),
    );
    await Promise.all([...labs.map((lab) => lab.down()), ...unused]);
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('covers every failpoint there is', () => {
    expect(CASES.map((c) => c.failpoint)).toEqual([...FAILPOINTS]);
  });

  it('refuses an unknown failpoint at start-up, exit 2, naming the variable and the choices', async () => {
    const run = await runCli(['probe', '--endpoints', 'http://127.0.0.1:1', '--timeout', '200ms'], { env: { [FAILPOINT_ENV]: 'member-remove' } });
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr.trimEnd().split('\n')).toEqual([
      `etcd-remediator: ${FAILPOINT_ENV}=member-remove: no such failpoint (one of ${FAILPOINTS.join(', ')}; unset it to run normally)`,
    ]);
  });

  async function crashIn(c: Case, lab: Lab, target: LabMember, dir: string, state: string): Promise<Service> {
    const env = { [FAILPOINT_ENV]: c.failpoint };
    if (c.crashIn === 'remediate') {
      return startCli(['remediate', '--endpoints', lab.endpoints().join(','), '--target', target.name, ...LAB_FLAGS, '--state', state], { env });
    }
    const policy = { ...LAB_POLICY, lockLease: '2s', ...(c.snapshot ? { snapshotBeforeRemove: true } : {}) };
    const config = path.join(dir, 'config.json');
    fs.writeFileSync(config, JSON.stringify({ state, listen: '127.0.0.1:0', clusters: [{ clusterId: 'default', endpoints: lab.endpoints(), policy }] }));
    const service = startCli(['run', '--config', config], { env });
    await service.waitForStderr(/listening on /, 20_000);
    const event = { clusterId: 'default', target: { memberName: target.name }, reason: 'crash test', source: 'test', observedAt: new Date().toISOString() };
    service.child.stdin!.write(`${JSON.stringify(event)}\n`);
    return service;
  }

  it.concurrent.each(CASES)(
    'crashed right after $failpoint is journaled ($target, in $crashIn), a fresh process resumes to one removal and one actuator call',
    (c) =>
      inSlot(async (slot) => {
        const dir = fs.mkdtempSync(path.join(root, `${c.failpoint}-`));
        const lab = await labFor(slot);
        // A lab that waited for its case on a loaded machine may be electing: the leader it agrees on.
        const leader = await lab.waitForLeader();
        const target = c.target === 'leader' ? leader : lab.members.find((m) => m.name !== leader.name)!;
        const before = (await lab.memberList()).map((m) => m.id).sort();
        const state = path.join(dir, 'state.sqlite');

        // 1. The crash: SIGKILL, right after the step is in the state file. Every run that held the
        // lock journals its release, also one etcd turned away ("unhealthy cluster" for ~5 s after
        // start): for lock-released, crash again on resume until the crash lands after the actuator.
        const resumeArgs = (id: string) => ['remediate', '--endpoints', lab.endpoints().join(','), '--resume', id, ...LAB_FLAGS, '--state', state];
        let dead: Awaited<ReturnType<typeof journalOf>> | undefined;
        for (let crashes = 0; !dead || !landed(c, dead.journal); crashes++) {
          expect(crashes, `crashes at ${c.failpoint} before one landed where wanted`).toBeLessThan(10);
          const crashed = dead ? startCli(resumeArgs(dead.incidentId), { env: { [FAILPOINT_ENV]: c.failpoint } }) : await crashIn(c, lab, target, dir, state);
          services.push(crashed);
          await within(crashed.exited, 30_000, () => `the process to die at ${c.failpoint}; stderr:\n${crashed.stderr()}`);
          expect(crashed.child.signalCode, crashed.stderr()).toBe('SIGKILL');
          expect(crashed.stderr()).toContain(`${FAILPOINT_ENV}=${c.failpoint}: the step is journaled`);
          dead = await journalOf(state);
          expect(dead.state).toBe('open');
          // The named step is the last thing it wrote.
          expect(dead.journal.at(-1)?.step.replace(/@\d+$/, '')).toBe(c.failpoint);
        }

        const survivors = lab.members.filter((m) => m.name !== target.name).map((m) => m.directUrl);
        const lockNow = () => readKey<{ owner: string }>(survivors, LOCK);
        if (c.holdsLock) {
          // No cleanup ran: the dead process still holds the lock in etcd.
          expect((await lockNow())?.owner).toMatch(new RegExp(`^incident:${dead.incidentId}:`));
          if (c.crashIn === 'run') {
            // Its 2 s lease lapses by itself, with nobody left to release it.
            await waitFor(async () => ((await lockNow()) === undefined ? true : undefined), {
              timeoutMs: 10_000,
              intervalMs: 200,
              what: `${LOCK} to lapse with the dead holder's lease`,
            });
          }
        } else if (c.failpoint === 'lock-released') {
          // Journaled after the release, not before it.
          expect(await lockNow()).toBeUndefined();
        }

        // 2. The resume: a fresh process on the same file takes it over at once from the dead owner.
        const resumed = startCli([...resumeArgs(dead.incidentId), '--json']);
        services.push(resumed);
        await resumed.waitForStderr(new RegExp(`resuming incident ${dead.incidentId}`), 10_000);
        const code = await within(resumed.exited, 40_000, () => `the resume to end; stderr:\n${resumed.stderr()}`);
        expect(code, resumed.stderr()).toBe(6);
        const result = jsonOf<{ outcome: string; incidentId: string; leaderMove: string }>({ code, stdout: resumed.stdout(), stderr: resumed.stderr() });
        // A move the dead process made is reported, though the resumed probe found a follower.
        expect(result).toMatchObject({
          outcome: 'awaiting-replacement',
          incidentId: dead.incidentId,
          leaderMove: c.target === 'leader' ? 'moved' : 'not-needed',
        });

        // 3. Exactly one removal: etcd's member list, the journal and the removal record agree.
        const after = (await lab.memberList()).map((m) => m.id).sort();
        expect(after).toEqual(before.filter((id) => id !== target.id));
        const done = await journalOf(state);
        expect(done.state).toBe('awaiting-replacement');
        expect(count(done.journal, 'member-removed'), 'member-removed').toBe(1);
        expect(count(done.journal, 'leader-elected'), 'leader-elected').toBe(1);
        expect(count(done.journal, 'actuator-called'), 'actuator-called').toBe(1);
        // A move is said once, also when the process died before it could say it.
        expect(count(done.journal, 'leader-moved'), 'leader-moved').toBe(c.target === 'leader' ? 1 : 0);
        const records = (await readKey<RemovalRecord[]>(survivors, REMOVALS)) ?? [];
        expect(records.map((r) => ({ memberId: r.memberId, incidentId: r.incidentId }))).toEqual([{ memberId: target.id, incidentId: dead.incidentId }]);

        // 4. The lock is released at the end, and the last run that took it said so.
        expect(await lockNow()).toBeUndefined();
        const steps = done.journal.map((e) => e.step);
        expect(steps.lastIndexOf('lock-released')).toBeGreaterThan(steps.indexOf('actuator-called'));
      }),
    90_000,
  );
});
