// Test support: the embedded runtime on a real lab, with every event and etcd call it makes recorded.
import fs from 'node:fs';
import { afterEach, expect } from 'vitest';
import os from 'node:os';
import path from 'node:path';
import type { EventEnvelope } from '../../../events/catalogue.ts';
import { createEtcdGuards, type EtcdGuards } from '../../../functions/adapters/etcd/etcd-guard.ts';
import { createEtcd3Transport, createProber, directPaths } from '../../../functions/adapters/etcd/index.ts';
import { memberMetricsOf } from '../../../functions/adapters/etcd/member-metrics.ts';
import type { ClusterEtcd } from '../../../functions/ports/cluster-etcd.ts';
import { parsePolicy, type PolicyInput } from '../../../functions/core/policy/policy.ts';
import type { Actuator } from '../../../functions/ports/actuator.ts';
import type { ClusterEntry } from '../../../functions/ports/cluster-directory.ts';
import type { EtcdMemberClient, EtcdTransport, TlsFiles } from '../../../functions/ports/etcd.ts';
import { createEtcdAccess } from '../../../functions/adapters/local/etcd-access.ts';
import { createKubeEtcd } from '../../../functions/adapters/kube/index.ts';
import type { KubeAccessConfig } from '../../../functions/ports/kube-access.ts';
import { createLocalRuntime, type LocalRuntime, type TerminalEvent } from '../../../infra/runtime/runtime.ts';
import { createStaticDirectory } from '../../../functions/adapters/local/static-directory.ts';
import type { Lab } from '../../../infra/lab/lab.ts';

/** Short enough for tests, on the lab's 50 ms heartbeat and 500 ms election timeout. */
export const labPolicy: PolicyInput = {
  graceMs: 1_500,
  electionTimeoutMs: 500,
  callTimeoutMs: 1_000,
  backoff: { baseMs: 200, capMs: 1_000 },
  // etcd refuses reconfiguration for ~5 s after a member connects; short backoffs spend attempts on it.
  maxAttempts: 60,
};

export interface CallLog {
  /** Every MemberRemove sent, answered or not. */
  memberRemove: string[];
  /** MemberRemove calls etcd accepted. */
  removed: string[];
  /** For each accepted MemberRemove, its index in `memberRemove`. */
  removedAt: number[];
  moveLeader: string[];
  /**
   * A fault a test injects around a call as it is sent (the matrix's maintenance rows): it gets the
   * member's endpoint and the call itself, and decides when the call goes out and returns.
   */
  around?: {
    moveLeader?: (endpoint: string, send: () => Promise<void>) => Promise<void>;
    defragment?: (endpoint: string, send: () => Promise<void>) => Promise<void>;
  };
}

/** A transport whose MemberRemove and MoveLeader calls are recorded as they are sent. */
export function recordCalls(inner: EtcdTransport, calls: CallLog): EtcdTransport {
  return {
    client(target) {
      const c = inner.client(target);
      const recorded: EtcdMemberClient = {
        ...c,
        memberRemove: async (id, deadline) => {
          const index = calls.memberRemove.push(id) - 1;
          const members = await c.memberRemove(id, deadline);
          calls.removed.push(id);
          calls.removedAt.push(index);
          return members;
        },
        moveLeader: (id, deadline) => {
          calls.moveLeader.push(id);
          const send = () => c.moveLeader(id, deadline);
          return calls.around?.moveLeader ? calls.around.moveLeader(target.endpoint, send) : send();
        },
        ...(c.defragment
          ? {
              defragment: (deadline: number) => {
                const send = () => c.defragment!(deadline);
                return calls.around?.defragment ? calls.around.defragment(target.endpoint, send) : send();
              },
            }
          : {}),
      };
      return recorded;
    },
    close: () => inner.close(),
  };
}

/** etcd3 access that records MemberRemove and MoveLeader calls as they are sent. */
export function recordingEtcd(calls: CallLog, options: { tls?: TlsFiles } = {}): { etcdFor: (cluster?: ClusterEntry) => ClusterEtcd; close(): Promise<void> } {
  const inner = createEtcd3Transport(options.tls ? { tls: options.tls } : {});
  const transport = recordCalls(inner, calls);
  // The lock and removal record in the lab's own etcd, as the runtime's own access keeps them.
  let guards: EtcdGuards | undefined;
  const access = { transport, prober: createProber(inner, directPaths) };
  return {
    etcdFor: (cluster?: ClusterEntry): ClusterEtcd => {
      guards ??= createEtcdGuards({
        ...(options.tls ? { tls: options.tls } : {}),
        prefix: cluster?.policy.guardPrefix ?? '/etcd-remediator',
        deadlineMs: cluster?.policy.callTimeoutMs ?? 1_000,
      });
      // Leader hygiene's scrape, as the runtime's own direct access makes it.
      return { ...access, guard: guards.at, metrics: memberMetricsOf(cluster ?? {}, inner) };
    },
    close: async () => {
      guards?.close();
      await inner.close();
    },
  };
}

/** The runtime's own access per cluster, its calls recorded (the prober's status and list calls aside). */
function recordingAccess(
  access: ReturnType<typeof createEtcdAccess>,
  calls: CallLog,
): { etcdFor: (cluster: ClusterEntry) => ClusterEtcd; close(): Promise<void> } {
  return {
    etcdFor: (cluster) => {
      const real = access.etcdFor(cluster);
      return { ...real, transport: recordCalls(real.transport, calls) };
    },
    close: () => access.close(),
  };
}

export interface Pipeline {
  runtime: LocalRuntime;
  events: EventEnvelope[];
  calls: CallLog;
  statePath: string;
  /** Submits MemberUnhealthy for a member name (or any target) and waits for the incident's final event. */
  remediate(target: string | Record<string, string>, timeoutMs?: number): Promise<TerminalEvent>;
  close(): Promise<void>;
}

/**
 * The call deadline of a pipeline that reaches etcd through Kubernetes: a probe's, for every member
 * over both paths. A look there may go through a relay (an etcdctl started in a pod, behind the fake
 * API server in the test's own process): on a 2-core machine loaded by the full suite, 1 s, 2 s and
 * then 3 s read a healthy follower's slow port-forward and relays as members down, and the request
 * was rightly blocked QUORUM_AT_RISK for what the probe saw (a clean-clone npm test, twice). No
 * case here hangs a path (the faults refuse at once), so the deadline costs nothing unless the
 * machine is slow.
 */
export const KUBE_CALL_TIMEOUT_MS = 6_000;

export async function startPipeline(
  // Only the endpoints are read: a cluster started some other way (say with TLS on) serves too.
  lab: Pick<Lab, 'endpoints'>,
  options: {
    policy?: PolicyInput;
    statePath?: string;
    actuator?: Actuator;
    clusterId?: string;
    /** Passed to createLocalRuntime; its default is `snapshots/` beside the state file. */
    snapshotDir?: string;
    /** Client credentials: put on the cluster entry and used by the recorded etcd access. */
    tls?: TlsFiles;
    /** Kube access on the cluster entry: the runtime's own etcd access (kube paths), recorded. */
    kube?: KubeAccessConfig;
    /** The configured client URLs; the lab's by default. */
    endpoints?: string[];
    /** The periodic learner check, as `run` and `watch` have it. */
    learnerChecks?: boolean;
    /** The periodic leader-hygiene check, as `run` and `watch` have it. */
    hygieneChecks?: boolean;
    /** The periodic maintenance check, as `run` and `watch` have it. */
    maintenanceChecks?: boolean;
    /** The metric table's series, as `run` and `watch` serve them (runtime.metrics). */
    metrics?: boolean;
  } = {},
): Promise<Pipeline> {
  const clusterId = options.clusterId ?? 'lab';
  const dir = options.statePath ? undefined : fs.mkdtempSync(path.join(os.tmpdir(), 'pipeline-'));
  const statePath = options.statePath ?? path.join(dir!, 'state.sqlite');
  const calls: CallLog = { memberRemove: [], removed: [], removedAt: [], moveLeader: [] };
  const etcd = options.kube ? recordingAccess(createEtcdAccess(createKubeEtcd), calls) : recordingEtcd(calls, options.tls ? { tls: options.tls } : {});
  const policy = parsePolicy({ ...labPolicy, ...(options.kube ? { callTimeoutMs: KUBE_CALL_TIMEOUT_MS } : {}), ...options.policy });
  const entry: ClusterEntry = {
    clusterId,
    endpoints: options.endpoints ?? lab.endpoints(),
    policy,
    ...(options.tls ? { tls: options.tls } : {}),
    ...(options.kube ? { kube: options.kube } : {}),
  };
  const runtime = await createLocalRuntime({
    statePath,
    directory: createStaticDirectory([entry]),
    etcdFor: etcd.etcdFor,
    logLevel: 'SILENT',
    ...(options.actuator ? { actuator: options.actuator } : {}),
    ...(options.snapshotDir ? { snapshotDir: options.snapshotDir } : {}),
    ...(options.learnerChecks ? { learnerChecks: true } : {}),
    ...(options.hygieneChecks ? { hygieneChecks: true } : {}),
    ...(options.maintenanceChecks ? { maintenanceChecks: true } : {}),
    ...(options.metrics ? { metrics: true } : {}),
  });
  const events: EventEnvelope[] = [];
  runtime.bus.subscribe((e) => events.push(e));
  await runtime.start();
  return {
    runtime,
    events,
    calls,
    statePath,
    async remediate(target, timeoutMs = 45_000) {
      const outcome = runtime.waitForOutcome({ clusterId }, timeoutMs);
      const now = new Date().toISOString();
      // If submit throws, its error is the one to report; the wait must not reject unobserved later.
      await runtime
        .submit({ clusterId, target: typeof target === 'string' ? { memberName: target } : target, reason: 'test', source: 'test', observedAt: now, at: now })
        .catch((error: unknown) => {
          outcome.catch(() => undefined);
          throw error;
        });
      return outcome;
    },
    async close() {
      try {
        await runtime.stop({ drainTimeoutMs: 5_000 });
      } finally {
        await etcd.close();
        if (dir) fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** Reasons of the events of one type, in order. */
export const reasonsOf = (events: EventEnvelope[], type: EventEnvelope['detailType']): string[] =>
  events.filter((e) => e.detailType === type).map((e) => String((e.detail as { reason?: unknown }).reason));

/** A lab and a pipeline per test, torn down after each, failed or not. */
export function labPerTest(): { lab?: Lab; pipeline?: Pipeline } {
  const current: { lab?: Lab; pipeline?: Pipeline } = {};
  afterEach(async () => {
    const { pipeline, lab } = current;
    delete current.pipeline;
    delete current.lab;
    // The lab goes down even when closing the pipeline fails.
    try {
      await pipeline?.close();
    } finally {
      await lab?.down();
    }
  });
  return current;
}

/**
 * The seed case's end: the leader removed without a move, a new leader standing, and the retries
 * inside the grace window naming the leader's endpoint and how it failed (`said`).
 */
export function expectRemovedWithoutMove(
  pipeline: Pipeline,
  outcome: TerminalEvent,
  leader: { id: string; name: string; clientUrl: string },
  said: string,
): void {
  expect(outcome.detailType, JSON.stringify(outcome.detail).slice(0, 1500)).toBe('RemediationCompleted');
  if (outcome.detailType !== 'RemediationCompleted') return;
  expect(outcome.detail.leaderMove).toBe('skipped');
  expect(outcome.detail.target.name).toBe(leader.name);
  expect(outcome.detail.newLeader.id).not.toBe(leader.id);
  const unreachable = pipeline.events.find((e) => e.detailType === 'RetryRequested' && e.detail.reason === 'LEADER_UNREACHABLE');
  const message = (unreachable?.detail as { message?: string } | undefined)?.message ?? '';
  expect(message).toContain(leader.clientUrl.replace(/^https?:\/\//, ''));
  expect(message).toContain(said);
}
