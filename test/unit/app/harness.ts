// The application steps on fakes: a real SQLite store, a recording bus, and an etcd whose probe
// answers whatever sample the test sets.
import type { DetailOf, DetailType, EventEnvelope } from '../../../events/catalogue.ts';
import type { ClusterDeps } from '../../../functions/app/common/deps.ts';
import { moveLeader } from '../../../functions/app/move/move-leader.ts';
import { probeMembers } from '../../support/probe-members.ts';
import { remediate } from '../../../functions/app/removal/remediate.ts';
import { scheduleRetry } from '../../../functions/app/incident/schedule-retry.ts';
import { parsePolicy, type PolicyInput } from '../../../functions/core/policy/policy.ts';
import type { ProbeSample } from '../../../functions/core/common/types.ts';
import { etcdOnlyActuator } from '../../../functions/adapters/etcd/etcd-only-actuator.ts';
import { manualClock, type ManualClock } from '../../support/manual-clock.ts';
import { UnknownClusterError, type ClusterEntry } from '../../../functions/ports/cluster-directory.ts';
import { EtcdCallError, type EtcdMemberClient } from '../../../functions/ports/etcd.ts';
import type { ScheduleRequest } from '../../../functions/ports/scheduler.ts';
import { openSqliteStore } from '../../../functions/adapters/local/sqlite-store.ts';
import { etcdGuardFake, type EtcdGuardFake } from '../../support/fakes/etcd-guard-fake.ts';
import { tempDir } from '../runtime/helpers.ts';
import { memorySnapshots, streamEtcdSnapshot } from '../../support/etcd-snapshot-bytes.ts';

export const T0 = Date.parse('2025-06-01T12:00:00Z');

export interface Harness {
  deps: ClusterDeps;
  clock: ManualClock;
  cluster: ClusterEntry;
  events: EventEnvelope[];
  scheduled: ScheduleRequest[];
  calls: { moveLeader: { endpoint: string; to: string }[]; memberRemove: string[]; maintenance: string[] };
  /** The lock and removal record, as the cluster's etcd keeps them. */
  guard: EtcdGuardFake;
  /** What the next probe sees. */
  setSample(sample: (at: number) => ProbeSample): void;
  /** Called for each MoveLeader; the default accepts it. */
  onMoveLeader: (to: string) => void;
  /** Called for each MemberRemove; the default accepts it. */
  onMemberRemove: (memberId: string) => void;
  /** Called for each Snapshot; then a small whole snapshot is streamed. */
  onSnapshot: () => void;
  /** Called for each maintenance call (`compact 42`, `defragment <endpoint>`, `disarm`) once recorded; throw to fail it. */
  onMaintenance: (call: string) => void;
  lastOf<T extends DetailType>(type: T): DetailOf<T>;
  close(): Promise<void>;
}

export function harness(policy: PolicyInput = {}): Harness {
  const dir = tempDir();
  const store = openSqliteStore({ path: dir.file('state.sqlite') });
  const clock = manualClock(T0);
  const cluster: ClusterEntry = { clusterId: 'c1', endpoints: ['http://127.0.0.1:4001'], policy: parsePolicy({ electionTimeoutMs: 1_000, ...policy }) };
  const events: EventEnvelope[] = [];
  const scheduled: ScheduleRequest[] = [];
  const calls: Harness['calls'] = { moveLeader: [], memberRemove: [], maintenance: [] };
  const maintenanceCall = async (call: string) => {
    calls.maintenance.push(call);
    h.onMaintenance(call);
  };
  let sample: (at: number) => ProbeSample = (at) => ({ at, members: [], listFailures: [], seeds: [] });
  const unused = (): never => {
    throw new EtcdCallError({ kind: 'other', message: 'not used by these tests' });
  };
  const h: Harness = {
    guard: etcdGuardFake(clock),
    clock,
    cluster,
    events,
    scheduled,
    calls,
    setSample: (s) => {
      sample = s;
    },
    onMoveLeader: () => undefined,
    onMemberRemove: () => undefined,
    onSnapshot: () => undefined,
    onMaintenance: () => undefined,
    lastOf: <T extends DetailType>(type: T) => events.filter((e) => e.detailType === type).at(-1)!.detail as DetailOf<T>,
    deps: {
      store,
      bus: { publish: async (...published) => void events.push(...published) },
      scheduler: { schedule: async (r) => void scheduled.push(r), cancel: async () => undefined },
      directory: {
        get: async (clusterId) => {
          if (clusterId !== cluster.clusterId) throw new UnknownClusterError(clusterId);
          return cluster;
        },
      },
      etcdFor: () => ({
        guard: () => h.guard,
        prober: { probe: async () => sample(clock.now()) },
        transport: {
          client: ({ endpoint, path }): EtcdMemberClient => ({
            endpoint,
            path,
            status: unused,
            memberList: unused,
            snapshot: async (to) => {
              h.onSnapshot();
              await streamEtcdSnapshot(to);
            },
            moveLeader: async (to) => {
              calls.moveLeader.push({ endpoint, to });
              h.onMoveLeader(to);
            },
            memberRemove: async (memberId) => {
              calls.memberRemove.push(memberId);
              h.onMemberRemove(memberId);
              return [];
            },
            compact: (revision) => maintenanceCall(`compact ${revision}`),
            defragment: () => maintenanceCall(`defragment ${endpoint}`),
            disarmNoSpace: () => maintenanceCall('disarm'),
          }),
          close: async () => undefined,
        },
      }),
      actuator: etcdOnlyActuator,
      clock,
      random: () => 0.5,
      log: { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined },
      snapshots: memorySnapshots(),
    },
    close: async () => {
      await store.close();
      dir.remove();
    },
  };
  return h;
}

/** A MemberUnhealthy for member etcd-<i> of cluster c1. */
export const unhealthy = (memberName: string, clusterId = 'c1'): DetailOf<'MemberUnhealthy'> => ({
  clusterId,
  attempt: 0,
  at: new Date(T0).toISOString(),
  target: { memberName },
  reason: 'test',
  source: 'test',
  observedAt: new Date(T0).toISOString(),
});

/** Drives an incident from its last RetryRequested to the next remediate outcome. */
export async function retryToRemediate(h: Harness) {
  await scheduleRetry(h.deps, h.lastOf('RetryRequested'));
  const due = h.scheduled.at(-1)!;
  h.clock.set(Math.max(h.clock.now(), due.at));
  await probeMembers(h.deps, { detailType: 'RetryDue', detail: due.event.detail as never });
  await moveLeader(h.deps, h.lastOf('MembersProbed'));
  return remediate(h.deps, h.lastOf('RemediationApproved'));
}
