import { describe, it, expect } from 'vitest';
import { nextMoveStep, type MoveAttempt, type MoveContext, type MoveLeaderDecision, type MoveStep } from '../../../../functions/core/move/move-steps.ts';
import { plan } from '../../../../functions/core/plan/plan.ts';
import { type EtcdFailure, type PathName, NO_LEADER } from '../../../../functions/core/common/types.ts';
import { backoffDelay } from '../../../../functions/core/waits/retry-after-backoff.ts';
import { reasonRow } from '../../../../functions/core/common/reason-table.ts';
import { cluster, endpointOf, failureOf, fixedRandom, id, policy } from '../fixtures.ts';

const NOW = 1_000_000;
const ET = 1_000;
const pol = policy({ electionTimeoutMs: ET, maxImmediateReprobes: 3 });
const allPaths = { direct: 'ok', 'port-forward': 'ok', 'exec-relay': 'ok' } as const;

/** etcd-0 leads and answers on every path; etcd-1..3 are candidates in that order. */
function moveDecision(): MoveLeaderDecision {
  const v = cluster(NOW, 4, {
    leader: 0,
    override: { 0: { paths: allPaths }, 1: { applied: 300 }, 2: { applied: 200 }, 3: { applied: 100 } },
  });
  const d = plan({
    samples: [v],
    targetId: id(0),
    incident: { openedAt: NOW, attempt: 0, immediateReprobes: 0 },
    remediation: { retryCount: 0 },
    policy: pol,
    now: NOW,
    random: fixedRandom(0.5),
  });
  if (d.kind !== 'move-leader') throw new Error(`expected move-leader, got ${d.kind}: ${d.message}`);
  return d;
}

const decision = moveDecision();
const ctx = (over: Partial<MoveContext> = {}): MoveContext => ({
  policy: pol,
  now: NOW,
  random: fixedRandom(0.5),
  attempt: 2,
  immediateReprobes: 0,
  openedAt: NOW,
  ...over,
});
const backoffAt = NOW + backoffDelay(2, pol, fixedRandom(0.5));

const etcd = (message: string): EtcdFailure => ({ kind: 'other', grpcCode: 2, message });
const tried = (path: PathName, candidate: number, outcome: MoveAttempt['outcome']): MoveAttempt => ({
  path,
  endpoint: endpointOf(0, path),
  candidateId: id(candidate),
  at: NOW,
  outcome,
});

interface Row {
  name: string;
  attempts: MoveAttempt[];
  ctx?: Partial<MoveContext>;
  want: Partial<Record<string, unknown>>;
  says?: RegExp;
}

const rows: Row[] = [
  { name: 'starts with the best candidate over the first path', attempts: [], want: { kind: 'try', path: 'direct', candidateId: id(1) } },
  { name: 'a move asks for verification', attempts: [tried('direct', 1, 'moved')], want: { kind: 'verify', candidateId: id(1) } },
  {
    name: 'a verified move approves',
    attempts: [tried('direct', 1, 'moved')],
    ctx: { verifiedLeaderId: id(1) },
    want: { kind: 'approve', reason: 'LEADER_MOVED', leaderMove: 'moved' },
    says: /^Leadership moved from etcd-0 \(8e9e05c52164694d\) to etcd-1 .* over direct http:\/\/127\.0\.0\.1:4001 and etcd-1 .* reports itself leader; removal of etcd-0 .* is approved\.$/,
  },
  {
    name: 'someone else leads after the move',
    attempts: [tried('direct', 1, 'moved')],
    ctx: { verifiedLeaderId: id(3) },
    want: { kind: 'retry', reason: 'LEADER_CHANGED', reprobeNow: true, at: NOW },
    says: /finds etcd-3 .* leading instead; we re-probe now\.$/,
  },
  {
    name: 'someone else leads, and the re-probes are spent',
    attempts: [tried('direct', 1, 'moved')],
    ctx: { verifiedLeaderId: id(3), immediateReprobes: 3 },
    want: { kind: 'retry', reason: 'LEADER_CHANGED', reprobeNow: false, at: backoffAt },
    says: /3 immediate re-probes are spent; we back off/,
  },
  {
    name: 'nobody leads after the move',
    attempts: [tried('direct', 1, 'moved')],
    ctx: { verifiedLeaderId: NO_LEADER },
    want: { kind: 'retry', reason: 'ELECTION_IN_PROGRESS', reprobeNow: false, at: NOW + ET, evidence: { waitsInARow: 1 } },
  },
  {
    // The move settled nothing: the row of looks it interrupted goes on, so moves that keep ending in an election back off.
    name: 'nobody leads after the move, the fourth look in a row',
    attempts: [tried('direct', 1, 'moved')],
    ctx: { verifiedLeaderId: NO_LEADER, waitsInARow: 3 },
    want: { kind: 'retry', reason: 'ELECTION_IN_PROGRESS', reprobeNow: false, at: NOW + 8 * ET, evidence: { waitsInARow: 4 } },
    says: /we look again after 8 s \(look 4 in a row\), at /,
  },
  {
    name: 'refused: the next path, same candidate',
    attempts: [tried('direct', 1, failureOf('refused'))],
    want: { kind: 'try', path: 'port-forward', candidateId: id(1) },
  },
  {
    name: 'timed out: the next path, same candidate',
    attempts: [tried('direct', 1, failureOf('refused')), tried('port-forward', 1, failureOf('timeout'))],
    want: { kind: 'try', path: 'exec-relay', candidateId: id(1) },
  },
  {
    name: 'every path refused or timed out: re-probe for the evidence rule',
    attempts: [tried('direct', 1, failureOf('refused')), tried('port-forward', 1, failureOf('timeout')), tried('exec-relay', 1, failureOf('refused'))],
    want: { kind: 'retry', reason: 'LEADER_UNREACHABLE', reprobeNow: true, at: NOW },
    says: /Every path to the leader etcd-0 .* failed \(direct http:\/\/127\.0\.0\.1:4001 refused; port-forward port-forward:\/\/etcd-0 timed out: Deadline exceeded; exec-relay exec-relay:\/\/etcd-0 refused: connect ECONNREFUSED 127\.0\.0\.1:1\)/,
  },
  {
    name: 'a bad transferee: the next candidate over the path that reached the leader',
    attempts: [tried('direct', 1, failureOf('refused')), tried('port-forward', 1, etcd('etcdserver: bad leader transferee'))],
    want: { kind: 'try', path: 'port-forward', candidateId: id(2) },
  },
  {
    name: 'every candidate unfit: back off',
    attempts: [1, 2, 3].map((c) => tried('direct', c, etcd('etcdserver: bad leader transferee'))),
    want: { kind: 'retry', reason: 'TRANSFEREE_UNFIT', reprobeNow: false, at: backoffAt },
    says: /to etcd-3 .* failed \(etcdserver: bad leader transferee\), and no candidate is left; we back off/,
  },
  {
    name: 'a transfer too slow: the next candidate',
    attempts: [tried('direct', 1, etcd('etcdserver: leader transfer took too long'))],
    want: { kind: 'try', path: 'direct', candidateId: id(2) },
  },
  {
    name: 'every transfer too slow: back off',
    attempts: [1, 2, 3].map((c) => tried('direct', c, etcd('etcdserver: leader transfer took too long'))),
    want: { kind: 'retry', reason: 'LEADER_TRANSFER_TIMEOUT', reprobeNow: false, at: backoffAt },
  },
  {
    name: 'not leader: re-probe now',
    attempts: [tried('direct', 1, etcd('etcdserver: not leader'))],
    want: { kind: 'retry', reason: 'LEADER_CHANGED', reprobeNow: true, at: NOW },
  },
  {
    name: 'not leader, re-probes spent: back off',
    attempts: [tried('direct', 1, etcd('etcdserver: not leader'))],
    ctx: { immediateReprobes: 5 },
    want: { kind: 'retry', reason: 'LEADER_CHANGED', reprobeNow: false, at: backoffAt },
  },
  {
    name: 'a transient etcd error: back off',
    attempts: [tried('direct', 1, etcd('etcdserver: request timed out'))],
    want: { kind: 'retry', reason: 'ETCD_TRANSIENT', reprobeNow: false, at: backoffAt },
  },
  {
    name: 'not enough started members: block',
    attempts: [tried('direct', 1, etcd('etcdserver: re-configuration failed due to not enough started members'))],
    want: { kind: 'block', reason: 'NOT_ENOUGH_STARTED_MEMBERS' },
  },
  {
    name: 'member not found: decide again from a fresh probe',
    attempts: [tried('direct', 1, etcd('etcdserver: member not found'))],
    want: { kind: 'retry', reason: 'MEMBER_NOT_FOUND', reprobeNow: true },
  },
  {
    name: 'an unknown error: back off',
    attempts: [tried('direct', 1, etcd('something odd'))],
    want: { kind: 'retry', reason: 'UNKNOWN_ERROR', reprobeNow: false, at: backoffAt },
  },
  {
    name: 'TLS on every path: block naming the certificate',
    attempts: (['direct', 'port-forward', 'exec-relay'] as const).map((p) => tried(p, 1, failureOf('tls'))),
    want: { kind: 'block', reason: 'TLS_FAILED' },
    says: /fix the client certificate or CA used for http:\/\/127\.0\.0\.1:4001, port-forward:\/\/etcd-0 and exec-relay:\/\/etcd-0\.$/,
  },
  {
    name: 'auth on every path, by kind or by message: block naming the user',
    attempts: [
      tried('direct', 1, failureOf('auth')),
      tried('port-forward', 1, etcd('etcdserver: permission denied')),
      tried('exec-relay', 1, { kind: 'other', grpcCode: 16, message: 'unauthenticated' }),
    ],
    want: { kind: 'block', reason: 'AUTH_FAILED' },
    says: /port-forward port-forward:\/\/etcd-0 rejected our credentials: etcdserver: permission denied;.*fix the etcd user\.$/,
  },
  {
    name: 'TLS on one path, refused on the rest: let the evidence rule judge',
    attempts: [tried('direct', 1, failureOf('refused')), tried('port-forward', 1, failureOf('tls')), tried('exec-relay', 1, failureOf('timeout'))],
    want: { kind: 'retry', reason: 'LEADER_UNREACHABLE', reprobeNow: true },
  },
];

describe('nextMoveStep', () => {
  it.each(rows)('$name', (row) => {
    const step = nextMoveStep(decision, row.attempts, ctx(row.ctx));
    expect(step).toMatchObject(row.want);
    if ('message' in step) {
      expect(step.message).toMatch(/\.$/);
      expect(step.message).toContain(id(0));
      expect(step.evidence).toMatchObject({ moveAttempts: row.attempts });
    }
    if (row.says) expect('message' in step && step.message).toMatch(row.says);
  });

  it.each(rows.filter((row) => 'reason' in row.want))('$name: the reason table allows the outcome', (row) => {
    const step = nextMoveStep(decision, row.attempts, ctx(row.ctx));
    if (!('reason' in step)) throw new Error(`expected a decision, got ${step.kind}`);
    expect(reasonRow(step.reason).outcomes).toContain(step.kind);
  });

  it('blocks without candidates and re-probes without paths', () => {
    expect(nextMoveStep({ ...decision, candidates: [] }, [], ctx())).toMatchObject({ kind: 'block', reason: 'NO_MOVE_CANDIDATE' });
    expect(nextMoveStep({ ...decision, paths: [] }, [], ctx())).toMatchObject({ kind: 'retry', reason: 'LEADER_UNREACHABLE', reprobeNow: true });
  });

  it('refuses an attempt that is not part of the decision', () => {
    expect(() => nextMoveStep(decision, [tried('direct', 7, failureOf('refused'))], ctx())).toThrow(RangeError);
  });

  it('drives a whole move: dead direct path, an unfit candidate, then success', () => {
    // What the cluster answers, per path and candidate.
    const answer = (path: PathName, candidate: string): MoveAttempt['outcome'] => {
      if (path === 'direct') return failureOf('refused');
      if (candidate === id(1)) return etcd('etcdserver: bad leader transferee');
      return 'moved';
    };
    const attempts: MoveAttempt[] = [];
    const steps: MoveStep[] = [];
    let verifiedLeaderId: string | undefined;
    for (let n = 0; n < 10; n++) {
      const step = nextMoveStep(decision, attempts, ctx(verifiedLeaderId ? { verifiedLeaderId } : {}));
      steps.push(step);
      if (step.kind === 'try') {
        attempts.push({ ...tried(step.path, 0, answer(step.path, step.candidateId)), candidateId: step.candidateId });
      } else if (step.kind === 'verify') {
        verifiedLeaderId = step.candidateId;
      } else break;
    }
    expect(
      steps.map((s) => (s.kind === 'try' ? `try ${s.path} ${s.candidateId}` : s.kind === 'verify' ? `verify ${s.candidateId}` : `${s.kind} ${s.reason}`)),
    ).toEqual([`try direct ${id(1)}`, `try port-forward ${id(1)}`, `try port-forward ${id(2)}`, `verify ${id(2)}`, 'approve LEADER_MOVED']);
  });
});
