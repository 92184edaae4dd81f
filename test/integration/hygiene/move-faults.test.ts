// Leader hygiene's move path under the failures AWS promises, on real etcd: a LeaderDegraded
// delivered twice moves once; a forged, stale or outdated one moves nothing and says why; a dry
// run only says; etcd refusing the move fails it; a delivery that dies mid-move is taken over
// once its claim lapses; a move whose event was lost is asked again by the next check, and one
// never delivered ends expired. The check itself: a member that cannot be scraped is named.
import type { Clock } from '../../../functions/ports/clock.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { EventEnvelope } from '../../../events/catalogue.ts';
import { openSqliteStore, type SqliteIncidentStore } from '../../../functions/adapters/local/sqlite-store.ts';
import { createStaticDirectory } from '../../../functions/adapters/local/static-directory.ts';
import { systemClock } from '../../../functions/lib/system-clock.ts';
import type { ClusterDeps } from '../../../functions/app/common/deps.ts';
import { moveDegradedLeader } from '../../../functions/app/hygiene/hygiene-move.ts';
import { checkLeaderHygiene } from '../../../functions/app/hygiene/leader-hygiene-check.ts';
import { emptyHygieneRecord, type HygieneMoveRecord } from '../../../functions/core/hygiene/hygiene-record.ts';
import { parsePolicy } from '../../../functions/core/policy/policy.ts';
import type { ClusterEntry } from '../../../functions/ports/cluster-directory.ts';
import type { ClusterEtcd } from '../../../functions/ports/cluster-etcd.ts';
import { EtcdCallError, type EtcdTransport } from '../../../functions/ports/etcd.ts';
import { startLab, type Lab } from '../../../infra/lab/lab.ts';
import { labPolicy, recordingEtcd, type CallLog } from '../e2e/pipeline.ts';

const CLUSTER = 'lab';
const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

let lab: Lab;
let dir: string;
let store: SqliteIncidentStore;
let calls: CallLog;
let etcd: ReturnType<typeof recordingEtcd>;
let published: EventEnvelope[];
/** The events a step handed the bus as said for good: what the metrics count. */
let settled: EventEnvelope[];
/** What the next MoveLeader does instead of moving, when set. */
let moveFault: (() => never) | undefined;

const entry = (hygiene: Record<string, unknown> = {}): ClusterEntry => ({
  clusterId: CLUSTER,
  endpoints: lab.endpoints(),
  policy: parsePolicy({ ...labPolicy, callTimeoutMs: 2_000, hygiene: { enabled: true, moveExpiryMs: 10_000, ...hygiene } }),
});

/** A transport whose MoveLeader may fail as a test says, before it reaches etcd. */
const faulty = (inner: EtcdTransport): EtcdTransport => ({
  client(target) {
    const c = inner.client(target);
    return { ...c, moveLeader: (id, deadline) => (moveFault ? Promise.resolve().then(moveFault) : c.moveLeader(id, deadline)) };
  },
  close: () => inner.close(),
});

function depsFor(cluster: ClusterEntry, clock: Clock = systemClock): ClusterDeps {
  const etcdFor = (c: ClusterEntry): ClusterEtcd => {
    const real = etcd.etcdFor(c);
    return { ...real, transport: faulty(real.transport) };
  };
  return {
    store,
    bus: {
      publish: async (...events: EventEnvelope[]) => void published.push(...events),
      settled: async (events: EventEnvelope[]) => void settled.push(...events),
    },
    directory: createStaticDirectory([cluster]),
    etcdFor,
    clock,
    random: Math.random,
    log: silent,
  } as unknown as ClusterDeps;
}

/** The lab's leader, its term and a follower: what a judgement names. */
async function judged(): Promise<{ from: string; to: string; term: number; toName: string }> {
  const leader = await lab.leader();
  const follower = lab.members.find((m) => m.id !== leader.id)!;
  return { from: leader.id, to: follower.id, toName: follower.name, term: (await lab.status(leader.name)).raftTerm };
}

/** Writes the record with one asked move, as a check that judged a move leaves it. */
async function asked(move: Partial<HygieneMoveRecord> = {}): Promise<HygieneMoveRecord> {
  const facts = await judged();
  const record: HygieneMoveRecord = {
    moveId: `m-${Date.now()}-${Math.random().toString(36).slice(2, 6)}`,
    at: Date.now(),
    state: 'asked',
    from: facts.from,
    to: facts.to,
    term: facts.term,
    message: `move leadership from a to b: a's WAL fsync p99 was 512 ms for 10 min while b's WAL fsync p99 was 4 ms`,
    ...move,
  };
  const stored = await store.hygieneRecord(CLUSTER);
  await store.saveHygieneRecord(CLUSTER, { ...emptyHygieneRecord(), moves: [record] }, stored?.version ?? 0);
  return record;
}

const delivery = (move: HygieneMoveRecord, dryRun = false) => ({
  clusterId: CLUSTER,
  moveId: move.moveId,
  at: new Date(move.at).toISOString(),
  from: move.from,
  to: move.to,
  term: move.term,
  dryRun,
  reason: 'LEADER_DEGRADED' as const,
  message: move.message!,
  evidence: {},
});

const stateOf = async (moveId: string) => (await store.hygieneRecord(CLUSTER))?.record.moves.find((m) => m.moveId === moveId);

beforeAll(async () => {
  lab = await startLab({ members: 3 });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hygiene-faults-'));
  store = openSqliteStore({ path: path.join(dir, 'state.sqlite') });
  calls = { memberRemove: [], removed: [], removedAt: [], moveLeader: [] };
  etcd = recordingEtcd(calls);
}, 60_000);

afterAll(async () => {
  await etcd?.close();
  await store?.close();
  await lab?.down();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => {
  published = [];
  settled = [];
  moveFault = undefined;
  calls.moveLeader.length = 0;
});

describe('a LeaderDegraded delivered as AWS delivers it', () => {
  it('twice: leadership moves once, the target leads in the next term, and the end is said for each delivery', async () => {
    const move = await asked();
    const deps = depsFor(entry());
    const [first, second] = [await moveDegradedLeader(deps, delivery(move)), await moveDegradedLeader(deps, delivery(move))];
    expect(first).toMatchObject({ kind: 'ended', state: 'moved', again: false });
    expect(second).toMatchObject({ kind: 'ended', state: 'moved', again: true });
    expect(calls.moveLeader).toEqual([move.to]);
    expect((await lab.leader()).id).toBe(move.to);
    const ended = published.filter((e) => e.detailType === 'HygieneMoveEnded');
    expect(ended).toHaveLength(2);
    expect(ended[0]!.detail).toEqual(ended[1]!.detail);
    // Said twice, counted once: the redelivery's end is not a second move.
    expect(settled.map((e) => e.detailType)).toEqual(['HygieneMoveEnded']);
    expect(ended[0]!.detail).toMatchObject({ outcome: 'moved', reason: 'HYGIENE_MOVED', newLeader: move.to, newTerm: move.term + 1 });
    expect((ended[0]!.detail as { message: string }).message).toMatch(
      /^Moved leadership from etcd\d to etcd\d in \d+ ms; etcd\d leads in term \d+: a's WAL fsync p99 was 512 ms for 10 min while b's WAL fsync p99 was 4 ms\.$/,
    );
  });

  it('naming a move the record does not keep: nothing moved, nothing said', async () => {
    const move = await asked();
    const outcome = await moveDegradedLeader(depsFor(entry()), { ...delivery(move), moveId: 'forged' });
    expect(outcome).toEqual({ kind: 'unknown-move' });
    expect(calls.moveLeader).toEqual([]);
    expect(published).toEqual([]);
    expect((await stateOf(move.moveId))?.state).toBe('asked');
  });

  it('judged longer ago than moveExpiryMs: expired, nothing moved', async () => {
    const move = await asked({ at: Date.now() - 11_000 });
    const outcome = await moveDegradedLeader(depsFor(entry()), delivery(move));
    expect(outcome).toMatchObject({ kind: 'ended', state: 'expired' });
    expect(calls.moveLeader).toEqual([]);
    expect((await stateOf(move.moveId))?.message).toMatch(/delivered 1\d(\.\d)? s later, past hygiene.moveExpiryMs: its figures are stale/);
  });

  it('after the term changed, or with an incident open: superseded, nothing moved, and why', async () => {
    const stale = await asked({ term: (await judged()).term - 1 });
    expect(await moveDegradedLeader(depsFor(entry()), delivery(stale))).toMatchObject({ kind: 'ended', state: 'superseded' });
    expect((await stateOf(stale.moveId))?.message).toMatch(/^Leadership was not moved from etcd\d to etcd\d: the term is \d+ now, not \d+ as judged\.$/);

    const move = await asked();
    const { incident } = await store.openOrJoin({
      clusterId: CLUSTER,
      targetKey: 'memberName=etcd9',
      target: { memberName: 'etcd9' },
      reason: 'test',
      now: Date.now(),
    });
    try {
      expect(await moveDegradedLeader(depsFor(entry()), delivery(move))).toMatchObject({ kind: 'ended', state: 'superseded' });
      expect((await stateOf(move.moveId))?.message).toMatch(
        new RegExp(`incident ${incident.incidentId} opened on the cluster, and remediation owns its leadership`),
      );
    } finally {
      await store.closeIncident(incident.incidentId, { outcome: 'closed', result: {}, now: Date.now() });
    }
    expect(calls.moveLeader).toEqual([]);
  });

  it('in a dry run: would-move said, nothing moved', async () => {
    const move = await asked();
    expect(await moveDegradedLeader(depsFor(entry({ dryRun: true })), delivery(move, true))).toMatchObject({ kind: 'ended', state: 'would-move' });
    expect(calls.moveLeader).toEqual([]);
    expect(published[0]).toMatchObject({ detailType: 'HygieneMoveEnded', detail: { outcome: 'would-move', reason: 'HYGIENE_WOULD_MOVE' } });
  });

  it("refused by etcd: failed, with etcd's words, and kept against the cooldown", async () => {
    const move = await asked();
    moveFault = () => {
      throw new EtcdCallError({ kind: 'other', grpcCode: 9, message: 'etcdserver: bad leader transferee' });
    };
    expect(await moveDegradedLeader(depsFor(entry()), delivery(move))).toMatchObject({ kind: 'ended', state: 'failed' });
    expect((await stateOf(move.moveId))?.message).toMatch(
      /^Moving leadership from etcd\d to etcd\d failed \(over direct http:\/\/127\.0\.0\.1:\d+: etcdserver: bad leader transferee\): the next check judges again\.$/,
    );
    expect((await lab.leader()).id).toBe(move.from);
  });

  it('whose delivery died mid-move: a redelivery within the claim moves nothing; after it, takes the move over once', async () => {
    const move = await asked();
    moveFault = () => {
      throw new Error('the function was stopped');
    };
    await expect(moveDegradedLeader(depsFor(entry()), delivery(move))).rejects.toThrow('the function was stopped');
    expect((await stateOf(move.moveId))?.state).toBe('moving');
    moveFault = undefined;
    expect(await moveDegradedLeader(depsFor(entry()), delivery(move))).toEqual({ kind: 'claimed-elsewhere' });
    expect(calls.moveLeader).toEqual([]);
    const later = { now: () => Date.now() + 10_001 };
    expect(await moveDegradedLeader(depsFor(entry(), later), delivery(move))).toMatchObject({ kind: 'ended', state: 'moved' });
    expect(calls.moveLeader).toEqual([move.to]);
  });
});

describe('the periodic check and the moves it asked for', () => {
  it('asks again for a move whose event was lost, and ends one never delivered past its expiry', async () => {
    const cluster = entry();
    const move = await asked();
    const check = await checkLeaderHygiene(depsFor(cluster), cluster);
    expect(check).toMatchObject({ kind: 'judged', verdict: { reason: 'HYGIENE_MOVE_PENDING' } });
    const again = published.filter((e) => e.detailType === 'LeaderDegraded');
    expect(again).toHaveLength(1);
    expect(again[0]!.detail).toMatchObject({ moveId: move.moveId, from: move.from, to: move.to, term: move.term });

    const lost = await asked({ at: Date.now() - 11_000 });
    published = [];
    const next = await checkLeaderHygiene(depsFor(cluster), cluster);
    expect(next.kind).toBe('judged');
    expect(published.filter((e) => e.detailType === 'LeaderDegraded')).toEqual([]);
    expect(await stateOf(lost.moveId)).toMatchObject({
      state: 'expired',
      message: expect.stringMatching(/was never delivered within 10000 ms of its judgement: not made/),
    });
    expect(calls.moveLeader).toEqual([]);
  });

  it('names a member whose /metrics cannot be read, and keeps the others\u2019 scrapes', async () => {
    const victim = lab.members[1]!;
    const cluster = { ...entry(), metricsUrls: { [victim.name]: 'http://127.0.0.1:1/' } };
    await store.saveHygieneRecord(CLUSTER, emptyHygieneRecord(), (await store.hygieneRecord(CLUSTER))?.version ?? 0);
    const check = await checkLeaderHygiene(depsFor(cluster), cluster);
    expect(check).toMatchObject({ kind: 'judged', verdict: { kind: 'not-evaluated', reason: 'HYGIENE_SCRAPE_FAILED' } });
    if (check.kind !== 'judged') throw new Error('not judged');
    expect(check.verdict.message).toMatch(
      new RegExp(`^Could not read member ${victim.name} \\(${victim.id}\\): GET http://127\\.0\\.0\\.1:1/metrics: .*ECONNREFUSED`),
    );
    const record = (await store.hygieneRecord(CLUSTER))!.record;
    expect(Object.keys(record.lastScrapes).sort()).toEqual(
      lab.members
        .filter((m) => m !== victim)
        .map((m) => m.id)
        .sort(),
    );
  });

  it('two checks at once: one writes, the other is dropped, and no move is asked twice', async () => {
    const cluster = entry();
    await store.saveHygieneRecord(CLUSTER, emptyHygieneRecord(), (await store.hygieneRecord(CLUSTER))?.version ?? 0);
    const before = (await store.hygieneRecord(CLUSTER))!.version;
    const results = await Promise.all([checkLeaderHygiene(depsFor(cluster), cluster), checkLeaderHygiene(depsFor(cluster), cluster)]);
    const kinds = results.map((r) => r.kind).sort();
    const after = (await store.hygieneRecord(CLUSTER))!.version;
    expect(after - before).toBe(kinds.filter((k) => k === 'judged').length);
    expect(kinds).toContain('judged');
    expect(published.filter((e) => e.detailType === 'LeaderDegraded')).toEqual([]);
  });
});
