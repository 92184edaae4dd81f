// The lab: N real etcd members on free loopback ports, each behind its own TCP fault proxy. Tests use it,
// and so does the `lab` command of the CLI.
//
// Design:
//  - Every member listens for clients on a real port, and advertises its fault proxy's URL as its
//    client URL. So the cluster itself tells callers to go through the proxy, and cutting the
//    proxy makes a healthy member unreachable to callers alone (a dead kubelet on the leader),
//    while raft traffic on the direct peer URLs is untouched.
//  - With `peerProxies`, each member also has a fault proxy in front of its peer (raft) port: it
//    listens on the real port and advertises the proxy (--initial-advertise-peer-urls, and every
//    --initial-cluster and member add names proxies), so every connection *to* a member's raft
//    port, the streams others dial to it and their pipeline posts alike, goes through its peer
//    proxy, and faultPeer() cuts, blackholes or slows them. A connection is faulted at the member
//    it was dialed to, whichever way its bytes flow: rafthttp sends a member's messages to a peer
//    on the stream that peer dialed to it. So a delay there slows the member's appends and
//    heartbeats to every follower, and a cut is no partition: with those streams down, etcd sends
//    the member's messages over its pipeline, POSTs to the others' own raft ports. Off by default.
//  - The lab's own questions (who leads, member list) go to the real ports: the lab must see the
//    truth whatever faults it has put in front of callers.
//  - Process faults (SIGSTOP, SIGCONT, SIGKILL) go by pid; a killed member stays in the cluster.
//  - Cleanup is never left to the caller alone: down() is idempotent, `await using` works, and a
//    synchronous exit/SIGINT/SIGTERM hook kills the members and removes the data if the process
//    dies first.
//  - Across processes (the `lab` CLI), proxies must outlive the command that made them. The lab
//    then runs inside a detached daemon (lab-daemon.ts) that owns the etcd children and the
//    proxies, writes a JSON state file (toState()), and takes fault commands on a loopback HTTP
//    control port. attachLab() (lab-attach.ts) reads the state file and drives it; signals go by
//    pid, and down() falls back to killing by pid if the daemon is gone.
//  - With `tls`, members serve clients as kubeadm's do (https, --client-cert-auth, a server
//    certificate naming 127.0.0.1 and localhost; lab-pki.ts), and the lab asks with its own client
//    certificate. The fault proxies work on TCP, so TLS passes through them untouched.
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { handleWhen, retry } from 'cockatiel';
import { onProcessExit } from './cleanup.ts';
import { gatewayAddLearner, gatewayMemberList, gatewayPromote, gatewayStatus, type GatewayMember, type GatewayStatus } from './etcd-gateway.ts';
import { clientScheme, logTail, resolveEtcdBin, spawnEtcd, type EtcdMemberSpec } from './etcd-process.ts';
import type { ClientTls } from './http-json.ts';
import { issueCert, makeLabPki, memberServerProfile, pemPairIn, readClientTls, type PemPair } from './lab-pki.ts';
import { startFaultProxy, type FaultMode, type FaultProxy } from './fault-proxy.ts';
import { starveProcess, type StarveCycle, type Starving } from './starve.ts';
import { freePorts } from './free-port.ts';
import type { LabFault, LabMemberRecord, LabMemberInfo, LabOptions, LabState, LabTlsFiles, MemberRunState } from './lab-types.ts';
import { WaitAborted, waitFor } from '../../functions/lib/wait-for.ts';
import { withTimeout } from '../../functions/lib/with-timeout.ts';

export type { LabFault, LabMemberRecord, LabMemberInfo, LabOptions, LabState, LabTlsFiles } from './lab-types.ts';

/** A lab member as the in-process lab hands it out: the record plus its live fault proxy. */
export interface LabMember extends LabMemberRecord {
  readonly proxy: FaultProxy;
  /** In front of the member's peer port, when the lab has peer proxies. */
  readonly peerProxy?: FaultProxy;
}

/** A member's fault proxies: the client one always, the peer one with peerProxies. */
interface MemberProxies {
  proxy: FaultProxy;
  peerProxy?: FaultProxy;
}

/** The proxy mode a lab fault sets: healing passes traffic again. */
const modeFor = (fault: LabFault): FaultMode => (fault === 'heal' ? 'pass' : fault);

const closeProxies = async ({ proxy, peerProxy }: MemberProxies): Promise<void> => {
  await Promise.all([proxy.close(), peerProxy?.close()]);
};

interface MemberRuntime {
  member: { -readonly [K in keyof LabMember]: LabMember[K] };
  child: ChildProcess;
  exited: Promise<void>;
  exitCode: number | null;
  exitSignal: NodeJS.Signals | null;
  hasExited: boolean;
  runState: MemberRunState;
}

/** How a member is started again: its cluster flags, more flags for this start, another data directory. */
interface RestartPlan {
  clusterState: 'new' | 'existing';
  initialCluster: string;
  extraArgs?: readonly string[];
  dataDir?: string;
}

/** How long one status question to one member may take. */
const STATUS_TIMEOUT_MS = 500;

export class Lab {
  readonly root: string;
  readonly token: string;
  readonly heartbeatMs: number;
  readonly electionTimeoutMs: number;
  /** The lab's PKI when its members serve TLS: the CA and the lab's own client certificate. */
  readonly tls: LabTlsFiles | undefined;
  private readonly clientTls: ClientTls | undefined;
  private readonly etcdBin: string;
  private readonly namePrefix: string;
  private readonly memberArgs: Record<string, string[]>;
  private readonly peerProxies: boolean;
  private readonly runtimes = new Map<string, MemberRuntime>();
  private readonly unregisterExitHook: () => void;
  private downing: Promise<void> | undefined;
  /** CPU starvation under way (starve()), ended before the members are killed. */
  private readonly starving = new Set<Starving>();

  constructor(config: {
    root: string;
    token: string;
    etcdBin: string;
    heartbeatMs: number;
    electionTimeoutMs: number;
    namePrefix: string;
    memberArgs?: Record<string, string[]>;
    tls?: LabTlsFiles;
    peerProxies?: boolean;
  }) {
    this.root = config.root;
    this.tls = config.tls;
    this.clientTls = config.tls ? readClientTls(config.tls) : undefined;
    this.token = config.token;
    this.etcdBin = config.etcdBin;
    this.heartbeatMs = config.heartbeatMs;
    this.electionTimeoutMs = config.electionTimeoutMs;
    this.namePrefix = config.namePrefix;
    this.memberArgs = config.memberArgs ?? {};
    this.peerProxies = config.peerProxies ?? false;
    this.unregisterExitHook = onProcessExit(() => this.downNow());
  }

  get members(): LabMember[] {
    return [...this.runtimes.values()].map((runtime) => runtime.member);
  }

  member(name: string): LabMember {
    return this.runtime(name).member;
  }

  /** Client URLs as the cluster advertises them: the fault proxies. */
  endpoints(): string[] {
    return this.members.map((member) => member.clientUrl);
  }

  runState(name: string): MemberRunState {
    return this.runtime(name).runState;
  }

  /** One member's own status, asked on its real port. */
  status(name: string, timeoutMs = STATUS_TIMEOUT_MS): Promise<GatewayStatus> {
    return gatewayStatus(this.member(name).directUrl, timeoutMs, this.clientTls);
  }

  /** The leader that a quorum of voting members agrees on right now; throws if there is none. */
  async leader(): Promise<LabMember> {
    const seen = await this.observeLeader();
    if (typeof seen === 'string') throw new Error(seen);
    return seen;
  }

  async waitForLeader(options: { excluding?: string[]; timeoutMs?: number } = {}): Promise<LabMember> {
    const excluding = new Set(options.excluding ?? []);
    const what = excluding.size > 0 ? `a leader other than ${[...excluding].join(', ')}` : 'an agreed leader';
    return waitFor(
      async () => {
        const seen = await this.observeLeader();
        if (typeof seen === 'string') throw new Error(seen);
        if (excluding.has(seen.name)) throw new Error(`leader is still ${seen.name}`);
        return seen;
      },
      { timeoutMs: options.timeoutMs ?? 10_000, what },
    );
  }

  async fault(name: string, fault: LabFault): Promise<void> {
    await this.member(name).proxy.setMode(modeFor(fault));
  }

  /** Faults the member's peer proxy: every connection other members dialed to its raft port. */
  async faultPeer(name: string, fault: LabFault): Promise<void> {
    const { peerProxy } = this.member(name);
    if (!peerProxy) throw new Error(`faultPeer ${name}: this lab has no peer proxies (start it with peerProxies: true)`);
    await peerProxy.setMode(modeFor(fault));
  }

  stop(name: string): void {
    this.signal(name, 'SIGSTOP');
    this.runtime(name).runState = 'stopped';
  }

  cont(name: string): void {
    this.signal(name, 'SIGCONT');
    this.runtime(name).runState = 'running';
  }

  /**
   * Starves a member of CPU (starve.ts): stopped `stopMs` out of every `stopMs + runMs` until
   * end(), or until down(). A member killed meanwhile ends it quietly.
   */
  starve(name: string, cycle: StarveCycle): Starving {
    const runtime = this.runtime(name);
    const starving = starveProcess(runtime.member.pid, cycle, (pid, sig) => {
      if (runtime.hasExited) return;
      try {
        process.kill(pid, sig);
      } catch {
        // exited between the check and the signal
      }
    });
    this.starving.add(starving);
    return {
      end: async () => {
        this.starving.delete(starving);
        await starving.end();
      },
    };
  }

  /** SIGKILL; the member stays in the cluster's member list, unreachable. */
  async kill(name: string, timeoutMs = 5_000): Promise<void> {
    const runtime = this.runtime(name);
    if (!runtime.hasExited) this.signal(name, 'SIGKILL');
    runtime.runState = 'killed';
    await withDeadline(runtime.exited, timeoutMs, `${name} (pid ${runtime.member.pid}) to exit after SIGKILL`);
  }

  /**
   * Adds a learner through a live member, starts it with --initial-cluster-state existing and waits
   * until it answers and has published its name. etcd refuses member add for a few seconds after
   * start ("unhealthy cluster"): that is retried within the deadline.
   */
  async addLearner(options: { timeoutMs?: number } = {}): Promise<LabMember> {
    const deadline = Date.now() + (options.timeoutMs ?? 20_000);
    const name = this.nextName();
    const [clientPort, peerPort] = await freePorts(2);
    const proxies = await this.startProxies(clientPort!, peerPort!);
    // The URL the cluster is told, so the member add names the peer proxy when there is one.
    const peerUrl = advertisedPeerUrl(peerPort!, proxies);
    try {
      await this.issueServerCert(name);
      const members = await waitFor(() => this.ensureLearnerAdded(peerUrl), {
        timeoutMs: Math.max(0, deadline - Date.now()),
        intervalMs: 250,
        what: `member add --learner ${peerUrl}`,
      });
      const initialCluster = members.map((m) => `${m.peerUrls[0] === peerUrl ? name : this.nameForPeer(m)}=${m.peerUrls[0] ?? ''}`).join(',');
      const runtime = this.spawnMember({
        name,
        clientPort: clientPort!,
        peerPort: peerPort!,
        ...proxies,
        initialCluster,
        clusterState: 'existing',
        isLearner: true,
      });
      await waitFor(
        async () => {
          this.assertAlive(runtime);
          const status = await gatewayStatus(runtime.member.directUrl, STATUS_TIMEOUT_MS, this.clientTls);
          const listed = (await this.memberList(STATUS_TIMEOUT_MS)).find((m) => m.id === status.memberId);
          if (listed?.name !== name) return undefined;
          runtime.member.id = status.memberId;
          return true;
        },
        { timeoutMs: Math.max(0, deadline - Date.now()), what: `learner ${name} to start` },
      );
      return runtime.member;
    } catch (error) {
      if (!this.runtimes.has(name)) await closeProxies(proxies);
      throw error;
    }
  }

  /**
   * Plays a machine's replacement as kubeadm join does: a learner added and started with
   * --initial-cluster-state existing (addLearner), then promoted once it has caught up (etcd
   * refuses before that, which is retried within the deadline). Resolves a voting member.
   */
  async joinReplacement(options: { timeoutMs?: number } = {}): Promise<LabMember> {
    const deadline = Date.now() + (options.timeoutMs ?? 20_000);
    const learner = await this.addLearner({ timeoutMs: Math.max(0, deadline - Date.now()) });
    const runtime = this.runtime(learner.name);
    await waitFor(
      async () => {
        const via = [...this.runtimes.values()].find((r) => r.runState === 'running' && !r.hasExited && !r.member.isLearner);
        if (!via) throw new WaitAborted('no running voting member to promote the learner through');
        try {
          await gatewayPromote(via.member.directUrl, learner.id, 2_000, this.clientTls);
        } catch (error) {
          // A promote whose answer was lost may have been applied: the list says.
          const listed = (await this.memberList(STATUS_TIMEOUT_MS)).find((m) => m.id === learner.id);
          if (listed && !listed.isLearner) return true;
          if (/not ready|unhealthy cluster|timed out|no answer|ECONN/i.test((error as Error).message)) return undefined;
          throw new WaitAborted(`member promote ${learner.id} refused: ${(error as Error).message}`, { cause: error });
        }
        return true;
      },
      { timeoutMs: Math.max(0, deadline - Date.now()), intervalMs: 200, what: `learner ${learner.name} (${learner.id}) to be promoted` },
    );
    runtime.member.isLearner = false;
    return runtime.member;
  }

  /**
   * member add --learner of a peer URL nothing will ever listen on, as a kubeadm join that failed
   * right after adding its member: a learner that never starts. Returns its id.
   */
  async addUnstartedLearner(options: { timeoutMs?: number } = {}): Promise<string> {
    const [peerPort] = await freePorts(1);
    const peerUrl = `http://127.0.0.1:${peerPort!}`;
    const members = await waitFor(() => this.ensureLearnerAdded(peerUrl), {
      timeoutMs: options.timeoutMs ?? 20_000,
      intervalMs: 250,
      what: `member add --learner ${peerUrl}`,
    });
    const added = members.find((m) => m.peerUrls.includes(peerUrl));
    if (!added) throw new Error(`member add --learner ${peerUrl}: not in the member list after`);
    return added.id;
  }

  /**
   * Kills a member and starts it again on its own data under another etcd name, as etcd allows: a
   * member publishes its name each time it starts, and two members may share one. The lab still
   * knows it by its own name (for faults and signals). Resolves once the member list shows the new name.
   */
  async restartAs(name: string, etcdName: string, options: { timeoutMs?: number } = {}): Promise<LabMember> {
    const deadline = Date.now() + (options.timeoutMs ?? 20_000);
    const { member } = this.runtime(name);
    await this.kill(name);
    const runtime = this.spawnMember({
      name,
      etcdName,
      clientPort: Number(new URL(member.directUrl).port),
      peerPort: Number(new URL(member.directPeerUrl).port),
      proxy: member.proxy,
      ...(member.peerProxy ? { peerProxy: member.peerProxy } : {}),
      // etcd reads it only on an empty data dir; here it has its own.
      initialCluster: `${etcdName}=${member.peerUrl}`,
      clusterState: 'existing',
      isLearner: member.isLearner,
    });
    runtime.member.id = member.id;
    await waitFor(
      async () => {
        this.assertAlive(runtime);
        const listed = (await this.memberList(STATUS_TIMEOUT_MS)).find((m) => m.id === member.id);
        if (listed?.name !== etcdName) throw new Error(`the member list names ${member.id} ${listed ? `"${listed.name}"` : 'nowhere'}`);
        return true;
      },
      { timeoutMs: Math.max(0, deadline - Date.now()), what: `${name} (${member.id}) to start again as ${etcdName}` },
    );
    return runtime.member;
  }

  /**
   * Kills a member (if it runs) and starts it again with `extraArgs` added to its flags, on its own
   * data or on `dataDir` (one a snapshot was restored into), as an operator edits a member's flags
   * and restarts it. Resolves once it answers with a leader, or at once with `waitForLeader: false`
   * (a restored member alone has no quorum to elect one).
   */
  async restartWith(
    name: string,
    extraArgs: readonly string[],
    options: { timeoutMs?: number; dataDir?: string; waitForLeader?: boolean } = {},
  ): Promise<LabMember> {
    const runtime = this.runtime(name);
    const { member } = runtime;
    if (!runtime.hasExited) await this.kill(name);
    const start = {
      clusterState: 'existing' as const,
      initialCluster: `${name}=${member.peerUrl}`,
      extraArgs,
      ...(options.dataDir ? { dataDir: options.dataDir } : {}),
    };
    if (options.waitForLeader === false) return this.spawnLike(member, start).member;
    return this.respawn(member, start, options.timeoutMs);
  }

  /** A member started again on its own ports and proxies. */
  private spawnLike(member: LabMember, start: RestartPlan): MemberRuntime {
    return this.spawnMember({
      name: member.name,
      clientPort: Number(new URL(member.directUrl).port),
      peerPort: Number(new URL(member.directPeerUrl).port),
      proxy: member.proxy,
      ...(member.peerProxy ? { peerProxy: member.peerProxy } : {}),
      ...start,
      isLearner: false,
    });
  }

  private async respawn(member: LabMember, start: RestartPlan, timeoutMs = 20_000): Promise<LabMember> {
    const runtime = this.spawnLike(member, start);
    const status = await waitFor(
      async () => {
        this.assertAlive(runtime);
        const answered = await gatewayStatus(runtime.member.directUrl, STATUS_TIMEOUT_MS, this.clientTls).catch(() => undefined);
        return answered && answered.leaderId !== '0' ? answered : undefined;
      },
      { timeoutMs, intervalMs: 100, what: `${member.name} to answer with a leader after its start` },
    );
    runtime.member.id = status.memberId;
    return runtime.member;
  }

  /**
   * Ground truth: the member list through the first voting member that answers on its real port
   * (a learner refuses this call).
   */
  async memberList(timeoutMs = 1_000): Promise<LabMemberInfo[]> {
    const problems: string[] = [];
    for (const runtime of this.runtimes.values()) {
      if (runtime.runState !== 'running' || runtime.hasExited || runtime.member.isLearner) continue;
      try {
        return await gatewayMemberList(runtime.member.directUrl, timeoutMs, this.clientTls);
      } catch (error) {
        problems.push(`${runtime.member.name}: ${(error as Error).message}`);
      }
    }
    throw new Error(`no member answered member list: ${problems.join('; ') || 'none running'}`);
  }

  toState(controlUrl?: string): LabState {
    return {
      version: 1,
      token: this.token,
      root: this.root,
      ownerPid: process.pid,
      ...(controlUrl === undefined ? {} : { controlUrl }),
      heartbeatMs: this.heartbeatMs,
      electionTimeoutMs: this.electionTimeoutMs,
      ...(this.tls ? { tls: this.tls } : {}),
      members: [...this.runtimes.values()].map(({ member, runState }) => ({
        name: member.name,
        id: member.id,
        clientUrl: member.clientUrl,
        directUrl: member.directUrl,
        peerUrl: member.peerUrl,
        directPeerUrl: member.directPeerUrl,
        pid: member.pid,
        dataDir: member.dataDir,
        logFile: member.logFile,
        isLearner: member.isLearner,
        proxyPort: member.proxy.port,
        mode: member.proxy.mode,
        ...(member.peerProxy ? { peerProxyPort: member.peerProxy.port, peerMode: member.peerProxy.mode } : {}),
        runState,
      })),
    };
  }

  /** Kills every member it started (by pid), closes the proxies, removes the data. Idempotent. */
  down(): Promise<void> {
    this.downing ??= this.shutdown();
    return this.downing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.down();
  }

  /** Starts the initial members and waits until all answer and agree on a leader. */
  async boot(count: number, startTimeoutMs: number): Promise<void> {
    await Promise.all(Array.from({ length: count }, (_, i) => this.issueServerCert(`${this.namePrefix}${i + 1}`)));
    const ports = await freePorts(count * 2);
    const proxies = await Promise.allSettled(Array.from({ length: count }, (_, i) => this.startProxies(ports[2 * i]!, ports[2 * i + 1]!)));
    const failed = proxies.find((p) => p.status === 'rejected');
    if (failed) {
      // No member owns these proxies yet, so down() would not close them.
      await Promise.all(proxies.flatMap((p) => (p.status === 'fulfilled' ? [closeProxies(p.value)] : [])));
      throw failed.reason;
    }
    const planned = proxies.map((p, i) => ({
      name: `${this.namePrefix}${i + 1}`,
      clientPort: ports[2 * i]!,
      peerPort: ports[2 * i + 1]!,
      ...(p as PromiseFulfilledResult<MemberProxies>).value,
    }));
    const initialCluster = planned.map((p) => `${p.name}=${advertisedPeerUrl(p.peerPort, p)}`).join(',');
    const runtimes = planned.map((p) => this.spawnMember({ ...p, initialCluster, clusterState: 'new', isLearner: false }));
    await waitFor(
      async () => {
        // Every check before any request: a throw in between would orphan the requests already
        // sent, and their rejections (ECONNRESET once down() kills the members) would go unhandled.
        for (const runtime of runtimes) this.assertAlive(runtime);
        const statuses = await Promise.all(runtimes.map((runtime) => gatewayStatus(runtime.member.directUrl, STATUS_TIMEOUT_MS, this.clientTls)));
        const leaders = new Set(statuses.map((s) => s.leaderId));
        const [leaderId] = leaders;
        const ids = statuses.map((s) => s.memberId);
        if (leaders.size !== 1 || leaderId === undefined || !ids.includes(leaderId)) {
          throw new Error(`members do not agree on a leader yet: ${statuses.map((s) => s.leaderId).join(', ')}`);
        }
        statuses.forEach((status, i) => (runtimes[i]!.member.id = status.memberId));
        return true;
      },
      { timeoutMs: startTimeoutMs, what: `${count} etcd members to answer and agree on a leader` },
    );
  }

  private spawnMember(plan: {
    name: string;
    /** The name etcd publishes, when it is not the lab's own name for the member. */
    etcdName?: string;
    clientPort: number;
    /** The real peer port the member listens on. */
    peerPort: number;
    proxy: FaultProxy;
    peerProxy?: FaultProxy;
    initialCluster: string;
    clusterState: 'new' | 'existing';
    isLearner: boolean;
    /** Flags for this start only, after the lab's own for the member. */
    extraArgs?: readonly string[];
    /** Another data directory than the member's own (one a snapshot was restored into). */
    dataDir?: string;
  }): MemberRuntime {
    const memberDir = path.join(this.root, plan.name);
    const server = this.serverCertOf(plan.name);
    const directPeerUrl = `http://127.0.0.1:${plan.peerPort}`;
    const spec: EtcdMemberSpec = {
      name: plan.etcdName ?? plan.name,
      clientPort: plan.clientPort,
      advertiseClientUrl: this.withClientScheme(plan.proxy.url),
      peerUrl: advertisedPeerUrl(plan.peerPort, plan),
      ...(plan.peerProxy ? { listenPeerUrl: directPeerUrl } : {}),
      initialCluster: plan.initialCluster,
      clusterState: plan.clusterState,
      token: this.token,
      heartbeatMs: this.heartbeatMs,
      electionTimeoutMs: this.electionTimeoutMs,
      dataDir: plan.dataDir ?? path.join(memberDir, 'data'),
      logFile: path.join(memberDir, 'etcd.log'),
      extraArgs: [...(this.memberArgs[plan.name] ?? []), ...(plan.extraArgs ?? [])],
      ...(this.tls ? { tls: { ...server, trustedCaFile: this.tls.caFile } } : {}),
    };
    const child = spawnEtcd(this.etcdBin, spec);
    const runtime: MemberRuntime = {
      member: {
        name: plan.name,
        id: '',
        clientUrl: spec.advertiseClientUrl,
        directUrl: `${clientScheme(spec)}://127.0.0.1:${plan.clientPort}`,
        peerUrl: spec.peerUrl,
        directPeerUrl,
        pid: child.pid ?? -1,
        dataDir: spec.dataDir,
        logFile: spec.logFile,
        isLearner: plan.isLearner,
        proxy: plan.proxy,
        ...(plan.peerProxy ? { peerProxy: plan.peerProxy } : {}),
      },
      child,
      exited: Promise.resolve(),
      exitCode: null,
      exitSignal: null,
      hasExited: child.pid === undefined,
      runState: 'running',
    };
    if (!runtime.hasExited) {
      runtime.exited = new Promise((resolve) =>
        child.once('exit', (code, signal) => {
          runtime.hasExited = true;
          runtime.exitCode = code;
          runtime.exitSignal = signal;
          resolve();
        }),
      );
    }
    this.runtimes.set(plan.name, runtime);
    return runtime;
  }

  /** A member's client proxy, and its peer proxy when the lab has them; none left open on failure. */
  private async startProxies(clientPort: number, peerPort: number): Promise<MemberProxies> {
    const proxy = await startFaultProxy({ upstreamPort: clientPort });
    if (!this.peerProxies) return { proxy };
    try {
      return { proxy, peerProxy: await startFaultProxy({ upstreamPort: peerPort }) };
    } catch (error) {
      await proxy.close();
      throw error;
    }
  }

  /** Where a member's server certificate lives: beside its data, as etcd/server.crt sits on a kubeadm node. */
  private serverCertOf(name: string): PemPair {
    return pemPairIn(this.serverCertDir(name), 'server');
  }

  private serverCertDir(name: string): string {
    return path.join(this.root, name, 'pki');
  }

  private async issueServerCert(name: string): Promise<void> {
    if (!this.tls) return;
    await issueCert({ certFile: this.tls.caFile, keyFile: this.tls.caKeyFile }, this.serverCertDir(name), 'server', memberServerProfile(name));
  }

  /** The proxy's URL with the scheme the members serve. */
  private withClientScheme(url: string): string {
    return this.tls ? url.replace(/^http:/, 'https:') : url;
  }

  /** Returns the member list once our learner is in it, adding it if it is not yet. */
  private async ensureLearnerAdded(peerUrl: string): Promise<GatewayMember[] | undefined> {
    const via = [...this.runtimes.values()].find((r) => r.runState === 'running' && !r.hasExited && !r.member.isLearner);
    if (!via) throw new WaitAborted('no running voting member to add a learner through');
    // List first: a member add whose answer was lost may still have been applied.
    const listed = await gatewayMemberList(via.member.directUrl, 1_000, this.clientTls);
    if (listed.some((m) => m.peerUrls.includes(peerUrl))) return listed;
    try {
      return (await gatewayAddLearner(via.member.directUrl, peerUrl, 2_000, this.clientTls)).members;
    } catch (error) {
      const message = (error as Error).message;
      // Right after start, etcd wants peers connected for a while before any reconfiguration.
      if (/unhealthy cluster|timed out|no answer|ECONN/i.test(message)) throw error;
      throw new WaitAborted(`member add --learner ${peerUrl} refused: ${message}`, { cause: error });
    }
  }

  private nameForPeer(member: GatewayMember): string {
    const known = [...this.runtimes.values()].find((r) => member.peerUrls.includes(r.member.peerUrl));
    return known?.member.name ?? (member.name || `unstarted-${member.id}`);
  }

  private nextName(): string {
    for (let i = this.runtimes.size + 1; ; i++) {
      const name = `${this.namePrefix}${i}`;
      if (!this.runtimes.has(name)) return name;
    }
  }

  /**
   * The leader agreed by every voting member that answers, provided they are a quorum of all
   * voting members; otherwise a sentence saying what was seen.
   */
  private async observeLeader(): Promise<LabMember | string> {
    const all = [...this.runtimes.values()];
    const voting = all.filter((r) => !r.member.isLearner);
    const asked = voting.filter((r) => r.runState === 'running' && !r.hasExited);
    const answers = await Promise.all(
      asked.map(async (r) => {
        try {
          return { name: r.member.name, status: await gatewayStatus(r.member.directUrl, STATUS_TIMEOUT_MS, this.clientTls) };
        } catch {
          return { name: r.member.name, status: undefined };
        }
      }),
    );
    const views = answers.flatMap((a) => (a.status ? [{ name: a.name, leaderId: a.status.leaderId }] : []));
    const quorum = Math.floor(voting.length / 2) + 1;
    const described = answers.map((a) => `${a.name}→${a.status ? a.status.leaderId : 'no answer'}`).join(', ');
    if (views.length < quorum) return `only ${views.length} of ${voting.length} voting members answered (${described})`;
    const leaderIds = new Set(views.map((v) => v.leaderId));
    const [leaderId] = leaderIds;
    const leader = all.find((r) => r.member.id === leaderId);
    if (leaderIds.size !== 1 || !leader) return `no agreed leader (${described})`;
    return leader.member;
  }

  private runtime(name: string): MemberRuntime {
    const runtime = this.runtimes.get(name);
    if (!runtime) throw new Error(`no lab member named ${name}; members: ${[...this.runtimes.keys()].join(', ')}`);
    return runtime;
  }

  private signal(name: string, signal: NodeJS.Signals): void {
    const runtime = this.runtime(name);
    if (runtime.hasExited) throw new Error(`${name} (pid ${runtime.member.pid}) has already exited`);
    process.kill(runtime.member.pid, signal);
  }

  private assertAlive(runtime: MemberRuntime): void {
    if (!runtime.hasExited) return;
    const { name, logFile } = runtime.member;
    throw new WaitAborted(
      `etcd member ${name} exited (code ${runtime.exitCode}, signal ${runtime.exitSignal}); log ${logFile} ends with:\n${logTail(logFile)}`,
    );
  }

  private async shutdown(): Promise<void> {
    this.unregisterExitHook();
    await Promise.all([...this.starving].map((s) => s.end()));
    const runtimes = [...this.runtimes.values()];
    for (const runtime of runtimes) killQuietly(runtime);
    // Proxies and data go whatever happens to the processes; a survivor is still reported.
    const exits = await Promise.allSettled(runtimes.map((r) => withDeadline(r.exited, 10_000, `${r.member.name} (pid ${r.member.pid}) to exit`)));
    await Promise.all(runtimes.map((r) => closeProxies(r.member)));
    await fs.promises.rm(this.root, { recursive: true, force: true });
    const stuck = exits.flatMap((e) => (e.status === 'rejected' ? [(e.reason as Error).message] : []));
    if (stuck.length > 0) throw new Error(`lab down: ${stuck.join('; ')}`);
  }

  /** The synchronous last resort, for exit and signal handlers. */
  private downNow(): void {
    for (const runtime of this.runtimes.values()) killQuietly(runtime);
    fs.rmSync(this.root, { recursive: true, force: true });
  }
}

function killQuietly(runtime: MemberRuntime): void {
  if (runtime.hasExited) return;
  try {
    // SIGKILL works on a stopped process too.
    process.kill(runtime.member.pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** The peer URL a member advertises: its peer proxy's, or its real peer port's without one. */
const advertisedPeerUrl = (peerPort: number, { peerProxy }: { peerProxy?: FaultProxy }): string => peerProxy?.url ?? `http://127.0.0.1:${peerPort}`;

/** A wait the lab bounds, said as waitFor says it. */
const withDeadline = (promise: Promise<void>, timeoutMs: number, what: string): Promise<void> =>
  withTimeout(
    timeoutMs,
    () => promise,
    () => new Error(`timed out after ${timeoutMs}ms waiting for ${what}`),
  );

export async function startLab(options: LabOptions): Promise<Lab> {
  const count = options.members;
  if (!Number.isInteger(count) || count < 1 || count > 7) throw new Error(`a lab has 1 to 7 members, not ${count}`);
  const etcdBin = resolveEtcdBin(options.etcdBin);
  return portRace.execute(() => bootLab(count, etcdBin, options));
}

const PORT_RACE_TRIES = 3;
/** A free port can be taken by someone else before etcd binds it: start again on new ports. */
const portRace = retry(
  handleWhen((error) => /address already in use/.test(error.message)),
  { maxAttempts: PORT_RACE_TRIES - 1 },
);

async function bootLab(count: number, etcdBin: string, options: LabOptions): Promise<Lab> {
  const parent = options.dataRoot ?? os.tmpdir();
  fs.mkdirSync(parent, { recursive: true });
  const root = await fs.promises.mkdtemp(path.join(parent, 'etcd-lab-'));
  let tls: LabTlsFiles | undefined;
  try {
    tls = options.tls ? await makeLabPki(path.join(root, 'pki')) : undefined;
  } catch (error) {
    await fs.promises.rm(root, { recursive: true, force: true });
    throw error;
  }
  const lab = new Lab({
    root,
    token: `lab-${process.pid}-${randomBytes(6).toString('hex')}`,
    etcdBin,
    heartbeatMs: options.heartbeatMs ?? 50,
    electionTimeoutMs: options.electionTimeoutMs ?? 500,
    namePrefix: options.namePrefix ?? 'etcd',
    ...(options.memberArgs ? { memberArgs: options.memberArgs } : {}),
    ...(tls ? { tls } : {}),
    ...(options.peerProxies ? { peerProxies: true } : {}),
  });
  try {
    await lab.boot(count, options.startTimeoutMs ?? 30_000);
    return lab;
  } catch (error) {
    await lab.down().catch(() => undefined);
    throw error;
  }
}
