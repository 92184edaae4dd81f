// A test double of etcd: clusters held in memory that answer every call at once, behind the etcd
// transport port (functions/ports/etcd.ts), so the real prober and the real pipeline run over it
// with no network. It keeps what the pipeline reads: members, the leader each member names, raft
// term and index, and membership changes. A member cut is unreachable on every path (refused),
// while the others keep naming whoever they named, as when only our path to it is gone.
import { createProber, directPaths } from '../../../functions/adapters/etcd/index.ts';
import type { Clock } from '../../../functions/ports/clock.ts';
import type { ClusterEtcd } from '../../../functions/ports/cluster-etcd.ts';
import { EtcdCallError, type EndpointTarget, type EtcdMemberClient, type EtcdTransport } from '../../../functions/ports/etcd.ts';
import type { MemberId, MemberInfo, MemberList, MemberStatus } from '../../../functions/core/common/types.ts';
import { streamEtcdSnapshot } from '../etcd-snapshot-bytes.ts';
import { etcdGuardFake } from '../fakes/etcd-guard-fake.ts';

export interface InstantEtcdCluster {
  readonly name: string;
  /** Client URLs of the members it has now, as the cluster's own discovery would list them. */
  endpoints(): string[];
  members(): MemberInfo[];
  /** The leader every reachable member names; undefined once it was removed and before the next one stands. */
  leader(): MemberInfo | undefined;
  member(name: string): MemberInfo;
  /** Unreachable on every path from now on; raft between the members is untouched. */
  cut(name: string): void;
  /** A new voting member joins, healthy (a replacement machine's kubeadm join), named m<N+1>. */
  join(): MemberInfo;
  /** How many calls each kind got, for a test that counts them. */
  readonly calls: Record<'status' | 'memberList' | 'moveLeader' | 'memberRemove' | 'snapshot', number>;
  /** The access the runtime's etcdFor hands the pipeline for this cluster: transport, the real prober, a guard fake. */
  access(clock: Clock): ClusterEtcd;
}

const refused = (endpoint: string): EtcdCallError => new EtcdCallError({ kind: 'refused', message: `connect ECONNREFUSED ${new URL(endpoint).host}` });

/** etcd's answer to a leader-only call on a follower (gRPC Unknown, matched on the message). */
const notLeader = (): EtcdCallError => new EtcdCallError({ kind: 'other', grpcCode: 2, message: 'etcdserver: not leader' });

const memberNotFound = (): EtcdCallError => new EtcdCallError({ kind: 'other', grpcCode: 5, message: 'etcdserver: member not found' });

/** `size` voting members named m1…mN, m1 the leader at term 2. Ids are distinct across clusters, as etcd's are. */
export function instantEtcdCluster(name: string, size = 3): InstantEtcdCluster {
  const clusterSeed = [...name].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7);
  const etcdClusterId = (0x100000000 + clusterSeed).toString(16);
  const memberNumbered = (n: number): MemberInfo => ({
    id: ((BigInt(clusterSeed) << 16n) + BigInt(n)).toString(16),
    name: `m${n}`,
    clientUrls: [`http://${name}-m${n}.instant:2379`],
    peerUrls: [`http://${name}-m${n}.instant:2380`],
    isLearner: false,
  });
  const all: MemberInfo[] = Array.from({ length: size }, (_, i) => memberNumbered(i + 1));
  const present = new Set<MemberId>(all.map((m) => m.id));
  const cut = new Set<MemberId>();
  const calls = { status: 0, memberList: 0, moveLeader: 0, memberRemove: 0, snapshot: 0 };
  let leaderId: MemberId = all[0]!.id;
  let term = 2;
  let index = 10;

  const byEndpoint = new Map(all.map((m) => [m.clientUrls[0]!, m]));
  const members = (): MemberInfo[] => all.filter((m) => present.has(m.id)).map((m) => ({ ...m, clientUrls: [...m.clientUrls], peerUrls: [...m.peerUrls] }));
  /** A new leader among the members left, as raft would elect one. */
  const elect = (): void => {
    const next = all.find((m) => present.has(m.id) && !cut.has(m.id)) ?? all.find((m) => present.has(m.id));
    leaderId = next?.id ?? '0';
    term += 1;
    index += 1;
  };

  const client = (target: EndpointTarget): EtcdMemberClient => {
    const member = byEndpoint.get(target.endpoint.replace(/\/+$/, ''));
    /** The member behind the endpoint when it answers; otherwise the call fails as a dead socket does. */
    const answering = (): MemberInfo => {
      if (!member || !present.has(member.id) || cut.has(member.id)) throw refused(target.endpoint);
      return member;
    };
    return {
      ...target,
      async status(): Promise<MemberStatus> {
        calls.status += 1;
        answering();
        return {
          leaderId,
          raftTerm: term,
          raftIndex: index,
          raftAppliedIndex: index,
          alarms: [],
          errors: [],
          version: '3.4.30',
          dbSize: 20_480,
          isLearner: false,
          clusterId: etcdClusterId,
        };
      },
      async memberList(): Promise<MemberList> {
        calls.memberList += 1;
        answering();
        return { clusterId: etcdClusterId, members: members() };
      },
      async moveLeader(transfereeId) {
        calls.moveLeader += 1;
        if (answering().id !== leaderId) throw notLeader();
        if (!present.has(transfereeId) || cut.has(transfereeId))
          throw new EtcdCallError({ kind: 'other', grpcCode: 2, message: 'etcdserver: bad leader transferee' });
        leaderId = transfereeId;
        term += 1;
      },
      async memberRemove(id) {
        calls.memberRemove += 1;
        answering();
        if (!present.has(id)) throw memberNotFound();
        present.delete(id);
        index += 1;
        if (id === leaderId) elect();
        return members();
      },
      async snapshot(to) {
        calls.snapshot += 1;
        answering();
        // As etcd streams one: the keyspace's bytes, then their SHA-256 (the store checks it is whole).
        await streamEtcdSnapshot(to, 'instant etcd: an empty keyspace');
      },
      async checkAdminPermission() {
        answering();
      },
    };
  };

  const transport: EtcdTransport = { client, close: async () => undefined };
  const member = (memberName: string): MemberInfo => {
    const found = all.find((m) => m.name === memberName);
    if (!found) throw new Error(`instant etcd ${name}: no member ${memberName}`);
    return found;
  };
  return {
    name,
    endpoints: () => members().map((m) => m.clientUrls[0]!),
    members,
    leader: () => (present.has(leaderId) ? all.find((m) => m.id === leaderId) : undefined),
    member,
    cut: (memberName) => void cut.add(member(memberName).id),
    join: () => {
      const joined = memberNumbered(all.length + 1);
      all.push(joined);
      byEndpoint.set(joined.clientUrls[0]!, joined);
      present.add(joined.id);
      index += 1;
      return joined;
    },
    calls,
    access: (clock) => {
      // One guard per cluster, as one etcd keyspace holds one lock and one removal record.
      const guard = etcdGuardFake(clock);
      return { transport, prober: createProber(transport, directPaths, clock), guard: () => guard };
    },
  };
}

/** Many clusters by name, and the etcdFor a runtime takes: one access per cluster, built once. */
export function instantEtcdFleet(clock: Clock) {
  const clusters = new Map<string, InstantEtcdCluster>();
  const accesses = new Map<string, ClusterEtcd>();
  return {
    add(name: string, size = 3): InstantEtcdCluster {
      const cluster = instantEtcdCluster(name, size);
      clusters.set(name, cluster);
      return cluster;
    },
    get(name: string): InstantEtcdCluster {
      const cluster = clusters.get(name);
      if (!cluster) throw new Error(`instant etcd: no cluster ${name}`);
      return cluster;
    },
    /** Needs no `this`: handed to the runtime as it is. */
    etcdFor: (entry: { clusterId: string }): ClusterEtcd => {
      let access = accesses.get(entry.clusterId);
      if (!access) {
        const cluster = clusters.get(entry.clusterId);
        if (!cluster) throw new Error(`instant etcd: no cluster ${entry.clusterId}`);
        accesses.set(entry.clusterId, (access = cluster.access(clock)));
      }
      return access;
    },
  };
}
