// Each maintenance step against etcd, under its own deadline: compact the history (through any
// member, once), defragment one member (over a path that reached it), move leadership off the
// leader before its own defragmentation, disarm NOSPACE (never CORRUPT), and check that a write is
// accepted again, which is the cluster lock taken and let go.
import { classifyFailure, type MemberId, type ReasonCode } from '../../core/common/index.ts';
import type { MaintenanceStep } from '../../core/maintenance/index.ts';
import { rankMoveCandidates } from '../../core/plan/index.ts';
import { describeMember, describeMemberIn, noSpaceRaisedBy, type ClusterView, type MemberView } from '../../core/view/index.ts';
import type { ClusterEntry } from '../../ports/cluster-directory.ts';
import { EtcdCallError, type EtcdMemberClient } from '../../ports/etcd.ts';
import { waitWithin } from '../../lib/wait-for.ts';
import type { ClusterDeps } from '../common/index.ts';
import { takeClusterLockAs } from '../fleet/index.ts';
import { probeCluster } from '../view/index.ts';

export type StepResult = { ok: true; message: string } | { ok: false; reason?: ReasonCode; message: string };

type Call = 'compact' | 'defragment' | 'disarmNoSpace';

/** Clients of `members` over each path that reached them and can make `call`, the healthiest first. */
function clientsFor(deps: ClusterDeps, cluster: ClusterEntry, members: readonly MemberView[], call: Call): EtcdMemberClient[] {
  const { transport } = deps.etcdFor(cluster);
  return members
    .flatMap((m) => m.paths.filter((p) => p.reachability === 'ok').map((p) => transport.client({ endpoint: p.endpoint, path: p.path })))
    .filter((c) => typeof c[call] === 'function');
}

/** The first client whose call etcd answers; a path that did not reach it gives way to the next. */
async function onFirst(
  clients: readonly EtcdMemberClient[],
  run: (client: EtcdMemberClient) => Promise<void>,
): Promise<{ ok: true } | { ok: false; said: string }> {
  const failures: string[] = [];
  for (const client of clients) {
    try {
      await run(client);
      return { ok: true };
    } catch (error) {
      if (!(error instanceof EtcdCallError)) throw error;
      failures.push(`${client.path} ${client.endpoint}: ${error.failure.message || error.failure.kind}`);
      if (classifyFailure(error.failure).class !== 'next-path') break;
    }
  }
  return { ok: false, said: failures.length > 0 ? failures.join('; ') : 'no path that can make the call reached a member (the exec relay only defragments)' };
}

const healthyFirst = (view: ClusterView): MemberView[] => [...view.members.filter((m) => m.healthy), ...view.members.filter((m) => !m.healthy && m.reachable)];

/**
 * One step; `defragmented` holds the members the run has defragmented so far, so a check of a
 * write can tell a member that raised the alarm again because it was never reached from one whose
 * live data fills its quota.
 */
export async function runMaintenanceStep(
  deps: ClusterDeps,
  cluster: ClusterEntry,
  view: ClusterView,
  step: MaintenanceStep,
  defragmented: ReadonlySet<MemberId> = new Set(),
): Promise<StepResult> {
  const { callTimeoutMs } = cluster.policy;
  switch (step.kind) {
    case 'compact': {
      const done = await onFirst(clientsFor(deps, cluster, healthyFirst(view), 'compact'), async (c) => {
        try {
          await c.compact!(step.revision, Math.max(callTimeoutMs, 60_000));
        } catch (error) {
          // Compacted there already (by the API server, or by us before a crash): done all the same.
          if (error instanceof EtcdCallError && /required revision has been compacted/.test(error.failure.message)) return;
          throw error;
        }
      });
      return done.ok
        ? { ok: true, message: `The history is compacted up to revision ${step.revision}.` }
        : { ok: false, reason: 'MAINTENANCE_STEP_FAILED', message: `The history could not be compacted to revision ${step.revision} (${done.said}).` };
    }
    case 'defragment': {
      const member = view.members.find((m) => m.id === step.member);
      const name = describeMemberIn(view, step.member);
      const before = member?.status?.dbSize;
      const done = await onFirst(member ? clientsFor(deps, cluster, [member], 'defragment') : [], (c) => c.defragment!(step.deadlineMs));
      if (!done.ok) return { ok: false, reason: 'MAINTENANCE_STEP_FAILED', message: `${name} was not defragmented (${done.said}).` };
      return { ok: true, message: `${name} is defragmented${before === undefined ? '' : ` (its database was ${before} bytes)`}.` };
    }
    case 'move-leader':
      return moveLeadershipOff(deps, cluster, view, step.from);
    case 'disarm': {
      const done = await onFirst(clientsFor(deps, cluster, healthyFirst(view), 'disarmNoSpace'), (c) => c.disarmNoSpace!(callTimeoutMs));
      return done.ok
        ? { ok: true, message: 'The NOSPACE alarm is disarmed.' }
        : { ok: false, reason: 'MAINTENANCE_STEP_FAILED', message: `The NOSPACE alarm could not be disarmed (${done.said}).` };
    }
    case 'verify':
      return writeAccepted(deps, cluster, view, defragmented);
  }
}

/** Leadership to the best-ranked follower, over each path that reached the leader, verified by a fresh probe. */
async function moveLeadershipOff(deps: ClusterDeps, cluster: ClusterEntry, view: ClusterView, from: string): Promise<StepResult> {
  const { policy } = cluster;
  const leader = view.members.find((m) => m.id === from);
  const to = rankMoveCandidates(view, from)[0];
  const name = describeMemberIn(view, from);
  if (!leader || !to)
    return { ok: false, reason: 'MAINTENANCE_STEP_FAILED', message: `Leadership could not be moved off ${name}: no healthy voting member to take it.` };
  // MoveLeader blocks until the transfer is done or aborted (one election timeout), as etcd's ReqTimeout bounds it.
  const deadlineMs = Math.max(policy.callTimeoutMs, 2 * policy.electionTimeoutMs + 1_000);
  const { transport } = deps.etcdFor(cluster);
  const clients = leader.paths.filter((p) => p.reachability === 'ok').map((p) => transport.client({ endpoint: p.endpoint, path: p.path }));
  const moved = await onFirst(clients, (c) => c.moveLeader(to.id, deadlineMs));
  if (!moved.ok)
    return { ok: false, reason: 'MAINTENANCE_STEP_FAILED', message: `Leadership could not be moved off ${name} to ${describeMember(to)} (${moved.said}).` };
  const leads = await waitWithin(
    async () => {
      const after = await probeCluster(deps, cluster);
      return after.leader.consensus === 'agreed' && after.leader.id !== from ? after.leader.id : undefined;
    },
    { timeoutMs: deadlineMs, intervalMs: Math.max(50, Math.round(policy.electionTimeoutMs / 10)), what: 'a new leader', clock: deps.clock },
  );
  return leads
    ? { ok: true, message: `Leadership moved off ${name}: ${describeMemberIn(view, leads)} leads.` }
    : { ok: false, reason: 'MAINTENANCE_STEP_FAILED', message: `MoveLeader off ${name} returned, but no other member was agreed leader after it.` };
}

/** A write accepted: the cluster lock taken and let go, as every remediation's first write is. */
async function writeAccepted(deps: ClusterDeps, cluster: ClusterEntry, view: ClusterView, defragmented: ReadonlySet<MemberId>): Promise<StepResult> {
  const attempt = await takeClusterLockAs(deps, cluster, 'maintenance-check', view, undefined);
  if (attempt.held) await attempt.lock.release();
  if (attempt.held || 'busy' in attempt) {
    // A member whose own database is still past its quota raises the alarm again as it applies the write.
    const after = await probeCluster(deps, cluster);
    const again = noSpaceRaisedBy(after).map((id) => after.members.find((m) => m.id === id) ?? { id, name: '' });
    if (again.length === 0)
      return {
        ok: true,
        message: attempt.held
          ? `A write is accepted again (the cluster lock taken and let go, ${attempt.lock.where}).`
          : `A write is accepted again: ${attempt.busy}.`,
      };
    // Never reached, so never defragmented: its file is as full as before, and it is the path, not the quota, to fix.
    const missed = again.filter((m) => !defragmented.has(m.id));
    if (missed.length > 0) {
      const names = missed.map(describeMember).join(', ');
      const one = missed.length === 1;
      return {
        ok: false,
        reason: 'MAINTENANCE_STEP_FAILED',
        message: `A write was accepted, and ${names} raised NOSPACE again as ${one ? 'it' : 'they'} applied it: no path reached ${one ? 'it' : 'them'}, so ${one ? 'it was' : 'they were'} never defragmented in this run; defragment ${one ? 'it' : 'each'} by hand (etcdctl defrag --endpoints=<its client URL>, one at a time), then disarm the alarm, or give the cluster a path that reaches ${one ? 'it' : 'them'}.`,
      };
    }
    return {
      ok: false,
      reason: 'MAINTENANCE_STILL_FULL',
      message: `A write was accepted, and ${again.map(describeMember).join(', ')} raised NOSPACE again as it applied it: its live data fills its quota; raise --quota-backend-bytes on every member, or delete keys, then disarm the alarm.`,
    };
  }
  const full = classifyFailure(attempt.failure).reason === 'ETCD_NO_SPACE';
  return {
    ok: false,
    reason: full ? 'MAINTENANCE_STILL_FULL' : 'MAINTENANCE_STEP_FAILED',
    message: full
      ? `After every member was defragmented and the alarm disarmed, etcd still refuses a write for space (${attempt.failure.message}): the live data fills the quota; raise --quota-backend-bytes on every member, or delete keys, then disarm the alarm.`
      : `No write could be checked (${attempt.where}: ${attempt.failure.message}).`,
  };
}
