// The port-forward path as an etcd member client: the etcd3 client dials a loopback port, and
// each connection it opens is forwarded by the workload API server and the node's kubelet to the
// pod's 2379, as KCP reaches etcd. When the stream cannot open, gRPC only sees a closed socket,
// so the failure is taken from the forward, which read the API server's own answer.
import { EtcdCallError, type EndpointTarget } from '../../../ports/etcd.ts';
import { createMemberClient, type ClosableMemberClient, type MemberClientOptions } from '../../etcd/member-client.ts';
import { parsePortForwardEndpoint } from '../kube-paths.ts';
import type { LocalForward, PodStreams } from '../streams/pod-streams.ts';

export interface PortForwardClientOptions extends MemberClientOptions {
  /** Dial the local port over TLS (the member serves https): kubeadm's certificates name 127.0.0.1. */
  secure: boolean;
}

export interface PortForwardAccess {
  client: ClosableMemberClient;
  /** The local URL the forward listens on, for other etcd clients (the cluster lock). */
  localUrl(): Promise<string>;
}

export function createPortForwardClient(target: EndpointTarget, streams: PodStreams, options: PortForwardClientOptions): PortForwardAccess {
  const pod = parsePortForwardEndpoint(target.endpoint);
  const scheme = options.secure ? 'https' : 'http';
  let opening: Promise<{ forward: LocalForward; inner: ClosableMemberClient }> | undefined;
  const open = () => {
    if (!opening) {
      const started = streams.forward({ namespace: pod.namespace, name: pod.name }, pod.port).then((forward) => ({
        forward,
        inner: createMemberClient({ endpoint: `${scheme}://127.0.0.1:${forward.port}`, path: target.path }, options),
      }));
      // A failed open is not cached: the next call tries again.
      started.catch(() => {
        if (opening === started) opening = undefined;
      });
      opening = started;
    }
    return opening;
  };

  async function call<T>(deadlineMs: number, run: (client: ClosableMemberClient, remainingMs: number) => Promise<T>): Promise<T> {
    const since = performance.now();
    const remaining = () => Math.max(0, Math.floor(since + deadlineMs - performance.now()));
    let opened;
    try {
      opened = await open();
    } catch (error) {
      throw new EtcdCallError({ kind: 'other', message: `port-forward to ${target.endpoint}: no local port: ${error instanceof Error ? error.message : String(error)}` }, { cause: error });
    }
    try {
      return await run(opened.inner, remaining());
    } catch (error) {
      if (!(error instanceof EtcdCallError)) throw error;
      // Wait only for connections still being diagnosed, and never past the caller's deadline.
      const failures = await opened.forward.failuresSince(since, Math.max(50, remaining()));
      const failure = failures.at(-1);
      if (!failure) throw error;
      throw new EtcdCallError({ kind: failure.reachability, message: failure.message }, { cause: error });
    }
  }

  const client: ClosableMemberClient = {
    endpoint: target.endpoint,
    path: target.path,
    status: (deadlineMs) => call(deadlineMs, (c, ms) => c.status(ms)),
    memberList: (deadlineMs) => call(deadlineMs, (c, ms) => c.memberList(ms)),
    moveLeader: (id, deadlineMs) => call(deadlineMs, (c, ms) => c.moveLeader(id, ms)),
    memberRemove: (id, deadlineMs) => call(deadlineMs, (c, ms) => c.memberRemove(id, ms)),
    snapshot: (to, deadlineMs) => call(deadlineMs, (c, ms) => c.snapshot(to, ms)),
    checkAdminPermission: (deadlineMs) => call(deadlineMs, (c, ms) => c.checkAdminPermission(ms)),
    close: () => {
      void opening?.then(({ inner }) => inner.close(), () => undefined);
    },
  };
  return { client, localUrl: async () => `${scheme}://127.0.0.1:${(await open()).forward.port}` };
}
