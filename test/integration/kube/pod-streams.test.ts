// The pod-streams adapter (client-node's Exec and PortForward, failures classified from the API
// server's own answer) against the protocol-level kube fake, with real etcd members behind it
// and the real etcdctl run by the fake's exec. Failure texts: shared/notes/kube-paths.md.
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';
import { WebSocketServer } from 'ws';
import { isObject, parseJsonNumbersAsText } from '../../../functions/adapters/kube/exec-relay/exec-relay-json.ts';
import { createPodStreams } from '../../../functions/adapters/kube/streams/pod-streams-client.ts';
import { PodStreamError, type PodRef, type PodStreams, type StreamFailureCause } from '../../../functions/adapters/kube/streams/pod-streams.ts';
import { gatewayStatus } from '../../../infra/lab/etcd-gateway.ts';
import { startLab, type Lab, type LabMember } from '../../../infra/lab/lab.ts';
import { startKubeApiFake, type KubeApiFake } from '../../support/fakes/kube/api-server.ts';

const pod = (name: string): PodRef => ({ namespace: 'kube-system', name });
/** Node cp-4 is deleted, its pod stays (§3); cp-5's pod has nothing listening on 2379 (§2b). */
const GONE_NODE = 'cp-4';
const DEAF_NODE = 'cp-5';

let lab: Lab;
let fake: KubeApiFake;
let streams: PodStreams;
const member = (index: number): LabMember => lab.members[index]!;

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  lab = await startLab({ members: 3 });
  fake = await startKubeApiFake();
  lab.members.forEach((m, index) => {
    const node = `cp-${index + 1}`;
    fake.addControlPlaneNode({ name: node, internalIp: `10.0.0.${11 + index}` });
    const direct = new URL(m.directUrl);
    fake.setUpstream(node, { host: direct.hostname, port: Number(direct.port) });
  });
  fake.addControlPlaneNode({ name: GONE_NODE, internalIp: '10.0.0.14' });
  fake.deleteNode(GONE_NODE);
  fake.addControlPlaneNode({ name: DEAF_NODE, internalIp: '10.0.0.15' });
  fake.setUpstream(DEAF_NODE, { host: '127.0.0.1', port: await closedPort() });
  streams = createPodStreams(fake.kubeConfig());
});

afterAll(async () => {
  await streams?.close();
  await fake?.stop();
  await lab?.down();
});

async function rejection(call: Promise<unknown>): Promise<PodStreamError> {
  try {
    await call;
  } catch (error) {
    if (error instanceof PodStreamError) return error;
    throw error;
  }
  throw new Error('expected a PodStreamError, got a result');
}

/** One TCP connection to a local forward, held until the far side ends it. */
function knock(port: number): Promise<void> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.on('close', () => resolve());
  });
}

interface FaultCase {
  title: string;
  node: string;
  pod: string;
  fault?: (node: string) => void;
  why: StreamFailureCause;
  /** The API server's (or kubelet's) own text, as the message must keep it, and the HTTP status
   * of a refusal before the upgrade (exec's v5 translator upgrades first, then fails, §1). */
  exec: { text: string; status?: number };
  forward: { text: string; status: number };
}

const FAULTS: FaultCase[] = [
  {
    title: 'kubelet down',
    node: 'cp-1',
    pod: 'etcd-cp-1',
    fault: (node) => fake.kubeletDown(node),
    why: 'kubelet-down',
    exec: {
      text: 'error sending request: Post "https://10.0.0.11:10250/exec/kube-system/etcd-cp-1/etcd?command=etcdctl&command=version&error=1&output=1": dial tcp 10.0.0.11:10250: connect: connection refused',
    },
    forward: { text: 'error dialing backend: dial tcp 10.0.0.11:10250: connect: connection refused', status: 500 },
  },
  {
    title: 'containerd down',
    node: 'cp-2',
    pod: 'etcd-cp-2',
    fault: (node) => fake.containerdDown(node),
    why: 'containerd-down',
    exec: { text: 'unable to upgrade connection: rpc error: code = Unavailable' },
    forward: { text: 'dial unix /var/run/containerd/containerd.sock: connect: no such file or directory', status: 500 },
  },
  {
    title: 'node deleted',
    node: GONE_NODE,
    pod: 'etcd-cp-4',
    why: 'node-gone',
    exec: { text: 'pods "cp-4" not found', status: 404 },
    forward: { text: 'pods "cp-4" not found', status: 404 },
  },
  {
    title: 'pod missing',
    node: 'cp-3',
    pod: 'etcd-cp-9',
    why: 'pod-gone',
    exec: { text: 'pods "etcd-cp-9" not found', status: 404 },
    forward: { text: 'pods "etcd-cp-9" not found', status: 404 },
  },
];

async function underFault<T>(fault: FaultCase, run: () => Promise<T>): Promise<T> {
  fault.fault?.(fault.node);
  try {
    return await run();
  } finally {
    fake.heal(fault.node);
  }
}

function expectFailure(error: PodStreamError, fault: FaultCase, prefix: string, seen: { text: string; status?: number }): void {
  expect(error.why).toBe(fault.why);
  expect(error.reachability).toBe('refused');
  expect(error.status).toBe(seen.status);
  expect(error.message.startsWith(`${prefix} kube-system/${fault.pod} failed: `)).toBe(true);
  expect(error.message).toContain(seen.text);
}

describe('exec through the API server', () => {
  const endpointStatus = (target: LabMember) => ['etcdctl', `--endpoints=${target.clientUrl}`, 'endpoint', 'status', '-w', 'json'];

  it('runs etcdctl in the pod: exit code 0 and the target member’s status on stdout', async () => {
    const result = await streams.exec(pod('etcd-cp-1'), endpointStatus(member(1)), 5_000);
    expect(result.exitCode).toBe(0);
    const [entry] = parseJsonNumbersAsText(result.stdout) as unknown[];
    const header = isObject(entry) && isObject(entry['Status']) ? entry['Status']['header'] : undefined;
    expect(isObject(header) ? BigInt(String(header['member_id'])).toString(16) : undefined).toBe(member(1).id);
  });

  it('resolves a non-zero exit with its code and stderr: the command failed, not the exec', async () => {
    const result = await streams.exec(pod('etcd-cp-1'), ['etcdctl', `--endpoints=${member(1).clientUrl}`, 'get'], 5_000);
    expect(result.exitCode).toBe(128);
    expect(result.stderr).toContain('get command needs one argument');
  });

  it('rejects when the runtime cannot start the command (no shell in the etcd image, §6): a missing binary, named', async () => {
    const error = await rejection(streams.exec(pod('etcd-cp-1'), ['sh', '-c', 'true'], 5_000));
    expect(error).toMatchObject({ why: 'binary-missing', reachability: 'other' });
    expect(error.message).toContain('exec: "sh": executable file not found in $PATH');
    expect(error.message).toContain("(sh is not in the container's image)");
    const byPath = await rejection(streams.exec(pod('etcd-cp-1'), ['/opt/bin/etcdctl', 'version'], 5_000));
    expect(byPath).toMatchObject({ why: 'binary-missing', reachability: 'other' });
    expect(byPath.message).toContain("(/opt/bin/etcdctl is not in the container's image)");
  });

  it.each(FAULTS)('$title: rejects with the cause and the API server’s text', async (fault) => {
    const error = await underFault(fault, () => rejection(streams.exec(pod(fault.pod), ['etcdctl', 'version'], 5_000)));
    expectFailure(error, fault, 'exec in', fault.exec);
  });

  it('ends a command that outlives its deadline: timeout, socket terminated', async () => {
    const started = performance.now();
    const error = await rejection(streams.exec(pod('etcd-cp-1'), ['etcdctl', `--endpoints=${member(0).clientUrl}`, 'watch', 'pod-streams-test'], 300));
    expect(error).toMatchObject({ why: 'timeout', reachability: 'timeout' });
    expect(error.message).toBe('exec in kube-system/etcd-cp-1 failed: no exit status within 300 ms (the deadline ran out; the stream was closed)');
    expect(performance.now() - started).toBeLessThan(3_000);
  });
});

describe('port-forward through the API server', () => {
  it('forwards a loopback port to the member behind the pod, and reuses it', async () => {
    const forward = await streams.forward(pod('etcd-cp-2'), 2379);
    const since = performance.now();
    const status = await gatewayStatus(`http://127.0.0.1:${forward.port}`, 5_000);
    expect(status.memberId).toBe(member(1).id);
    expect((await streams.forward(pod('etcd-cp-2'), 2379)).port).toBe(forward.port);
    expect(await forward.failuresSince(since, 2_000)).toEqual([]);
  });

  it.each(FAULTS)('$title: failuresSince reports the cause and the API server’s text', async (fault) => {
    const forward = await streams.forward(pod(fault.pod), 2379);
    const failures = await underFault(fault, async () => {
      const since = performance.now();
      await knock(forward.port);
      return forward.failuresSince(since, 2_000);
    });
    expect(failures).toHaveLength(1);
    expectFailure(failures[0]!, fault, 'port-forward to', fault.forward);
  });

  it('etcd not listening in the pod: the error channel’s text, as not-listening', async () => {
    const forward = await streams.forward(pod(`etcd-${DEAF_NODE}`), 2379);
    const since = performance.now();
    await knock(forward.port);
    const [failure, ...rest] = await forward.failuresSince(since, 2_000);
    expect(rest).toEqual([]);
    expect(failure).toMatchObject({ why: 'not-listening', reachability: 'refused' });
    expect(failure!.message).toMatch(
      /^port-forward to kube-system\/etcd-cp-5 failed: error forwarding port 2379 to pod [0-9a-f]{64}, uid : .*dial tcp4 127\.0\.0\.1:2379: connect: connection refused .*\(nothing listens on port 2379 in the pod\)$/,
    );
  });

  it('a closed forward frees its port; the next forward() opens a new one', async () => {
    const forward = await streams.forward(pod('etcd-cp-3'), 2379);
    await forward.close();
    const refused = await new Promise<string>((resolve) =>
      net.connect(forward.port, '127.0.0.1').on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? '')),
    );
    expect(refused).toBe('ECONNREFUSED');
    const again = await streams.forward(pod('etcd-cp-3'), 2379);
    expect(again).not.toBe(forward);
    expect((await gatewayStatus(`http://127.0.0.1:${again.port}`, 5_000)).memberId).toBe(member(2).id);
  });
});

describe('refusals the fake does not make: RBAC, credentials, no API server', () => {
  function configFor(server: string): KubeConfig {
    const config = new KubeConfig();
    config.loadFromOptions({
      clusters: [{ name: 'c', server, skipTLSVerify: true }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    return config;
  }

  /** An API server that answers every upgrade with `code` and a Status saying `message`. */
  async function refusing(code: number, message: string): Promise<{ streams: PodStreams; stop: () => Promise<void> }> {
    const body = JSON.stringify({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message,
      reason: code === 403 ? 'Forbidden' : 'Unauthorized',
      code,
    });
    const server = http.createServer();
    server.on('upgrade', (_request, socket) => {
      socket.end(
        `HTTP/1.1 ${code} Refused\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const refused = createPodStreams(configFor(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
    return {
      streams: refused,
      stop: async () => {
        await refused.close();
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      },
    };
  }

  it('403: forbidden, as auth, saying which RBAC verbs the identity needs', async () => {
    const server = await refusing(
      403,
      'pods "etcd-cp-1" is forbidden: User "remediator" cannot create resource "pods/exec" in API group "" in the namespace "kube-system"',
    );
    try {
      const error = await rejection(server.streams.exec(pod('etcd-cp-1'), ['etcdctl', 'version'], 5_000));
      expect(error).toMatchObject({ why: 'forbidden', reachability: 'auth', status: 403 });
      expect(error.message).toContain('cannot create resource "pods/exec"');
      expect(error.message).toContain('get and create on pods/exec and pods/portforward');
    } finally {
      await server.stop();
    }
  });

  it('401: auth', async () => {
    const server = await refusing(401, 'Unauthorized');
    try {
      const forward = await server.streams.forward(pod('etcd-cp-1'), 2379);
      const since = performance.now();
      await knock(forward.port);
      const [failure] = await forward.failuresSince(since, 2_000);
      expect(failure).toMatchObject({ why: 'other', reachability: 'auth', status: 401 });
      expect(failure!.message).toBe('port-forward to kube-system/etcd-cp-1 failed: Unauthorized (the API server did not accept the credentials)');
    } finally {
      await server.stop();
    }
  });

  it('a stream that ends without a Status rejects instead of hanging', async () => {
    // Upgrades, sends the initial empty stdout frame (§4), then goes away.
    const server = new WebSocketServer({ port: 0, host: '127.0.0.1', handleProtocols: (offered) => [...offered][0] ?? false });
    server.on('connection', (ws) => ws.send(Buffer.from([1]), () => ws.close(1011, 'gone')));
    await new Promise((resolve) => server.once('listening', resolve));
    const abrupt = createPodStreams(configFor(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
    try {
      const error = await rejection(abrupt.exec(pod('etcd-cp-1'), ['etcdctl', 'version'], 5_000));
      expect(error).toMatchObject({ why: 'other', reachability: 'other' });
      expect(error.message).toBe(
        'exec in kube-system/etcd-cp-1 failed: the stream closed (code 1011: gone) before a Status arrived (the stream ended without an exit status)',
      );
    } finally {
      await abrupt.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('no API server: api-unreachable, refused', async () => {
    const nowhere = createPodStreams(configFor(`http://127.0.0.1:${await closedPort()}`));
    try {
      const error = await rejection(nowhere.exec(pod('etcd-cp-1'), ['etcdctl', 'version'], 5_000));
      expect(error).toMatchObject({ why: 'api-unreachable', reachability: 'refused' });
      expect(error.message).toMatch(/^exec in kube-system\/etcd-cp-1 failed: connect ECONNREFUSED 127\.0\.0\.1:\d+ \(the API server did not answer\)$/);
    } finally {
      await nowhere.close();
    }
  });
});

describe('close', () => {
  it('ends running execs and frees every forward', async () => {
    const own = createPodStreams(fake.kubeConfig());
    const forward = await own.forward(pod('etcd-cp-2'), 2379);
    const running = rejection(own.exec(pod('etcd-cp-1'), ['etcdctl', `--endpoints=${member(0).clientUrl}`, 'watch', 'pod-streams-close'], 30_000));
    await own.close();
    expect(await running).toMatchObject({ why: 'other', message: 'exec in kube-system/etcd-cp-1 failed: the pod streams were closed (closed by the caller)' });
    const refused = await new Promise<string>((resolve) =>
      net.connect(forward.port, '127.0.0.1').on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? '')),
    );
    expect(refused).toBe('ECONNREFUSED');
    await expect(own.forward(pod('etcd-cp-2'), 2379)).rejects.toBeInstanceOf(PodStreamError);
  });
});
