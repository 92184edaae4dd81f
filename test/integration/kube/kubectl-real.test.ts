// The real kubectl against the kube fake, in front of a real etcd lab over TLS as kubeadm runs it:
// `kubectl port-forward` to an etcd pod and etcdctl through it, and `kubectl exec` of the image's
// etcdctl with kubeadm's healthcheck-client certificate. The machine's Cloud SDK ships one kubectl
// per minor (kubectl.1.27 … kubectl.1.33); KUBECTL_BIN names another. Those that speak WebSockets
// run both: exec uses v5.channel.k8s.io from 1.30 on (KUBECTL_REMOTE_COMMAND_WEBSOCKETS default
// on); port-forward tunnels SPDY through a WebSocket (SPDY/3.1+portforward.k8s.io) from 1.31 on,
// and in 1.30 with KUBECTL_PORT_FORWARD_WEBSOCKETS=true. Each before 1.30 runs both over plain
// SPDY (an HTTP upgrade to SPDY/3.1): port-forward's streams, and exec's v4.channel.k8s.io streams
// as the kubelet's remotecommand server answers them (the fake's exec-spdy.ts).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isObject, parseJsonNumbersAsText } from '../../../functions/adapters/kube/exec-relay/exec-relay-json.ts';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { installedKubectls } from '../../support/kubectl-bins.ts';
import { startKubeWorld, type KubeWorld } from './kube-world.ts';

const run = promisify(execFile);

interface Kubectl {
  bin: string;
  minor: number;
  /** What this version needs to speak WebSockets for both commands. */
  env: Record<string, string>;
}

const asKubectl = (bin: string, minor: number): Kubectl => ({ bin, minor, env: minor === 30 ? { KUBECTL_PORT_FORWARD_WEBSOCKETS: 'true' } : {} });

/** KUBECTL_BIN, or the newest Cloud SDK kubectl and the oldest that speaks WebSockets (1.30), and 1.31, the first that tunnels by default. */
function findKubectls(): Kubectl[] {
  const all = installedKubectls();
  if (process.env.KUBECTL_BIN) return all.filter((k) => k.minor >= 30).map((k) => asKubectl(k.bin, k.minor));
  const found = new Map(all.filter((k) => k.minor >= 30).map((k) => [k.minor, k.bin]));
  const minors = [...found.keys()].sort((a, b) => a - b);
  const chosen = new Set([minors.at(-1), minors[0], minors.includes(31) ? 31 : undefined].filter((m): m is number => m !== undefined));
  return [...chosen].sort((a, b) => b - a).map((minor) => asKubectl(found.get(minor)!, minor));
}

const kubectls = findKubectls();

/** Every Cloud SDK kubectl before 1.30 (1.27, 1.28, 1.29): their port-forward and exec are plain SPDY. */
function findSpdyKubectls(): Kubectl[] {
  if (process.env.KUBECTL_BIN) return [];
  return installedKubectls()
    .filter((k) => k.minor < 30)
    .map((k) => ({ ...k, env: {} }));
}

const spdyKubectls = findSpdyKubectls();
const ETCDCTL = process.env.ETCDCTL_BIN ?? 'etcdctl';
// kubeadm's files in the etcd pod (kube-paths.md §6), as the fake's pod filesystem holds them.
const POD_PKI = [
  '--cacert=/etc/kubernetes/pki/etcd/ca.crt',
  '--cert=/etc/kubernetes/pki/etcd/healthcheck-client.crt',
  '--key=/etc/kubernetes/pki/etcd/healthcheck-client.key',
];

/** The member id (hex, as the lab names it) in `endpoint status -w json` output. */
function memberIdOf(stdout: string): string | undefined {
  const [entry] = parseJsonNumbersAsText(stdout) as unknown[];
  const header = isObject(entry) && isObject(entry['Status']) ? entry['Status']['header'] : undefined;
  return isObject(header) ? BigInt(String(header['member_id'])).toString(16) : undefined;
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  await exited;
}

if (kubectls.length === 0) {
  describe('real kubectl against the kube fake', () => {
    it.skip('needs a kubectl ≥ 1.30: none found in the Cloud SDK bin folder or on PATH, and KUBECTL_BIN is not set', () => undefined);
  });
} else {
  describe('real kubectl against the kube fake', () => {
    let world: KubeWorld;
    let dir: string;
    let kubeconfig: string;

    beforeAll(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kubectl-real-'));
      kubeconfig = path.join(dir, 'kubeconfig');
      world = await startKubeWorld(3, { tls: true, kubeconfigFile: kubeconfig });
    });

    afterAll(async () => {
      await world?.down();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    const target = () => world.lab.members[0]!;

    for (const kubectl of [...kubectls, ...spdyKubectls]) {
      const envOf = () => ({ ...process.env, KUBECONFIG: kubeconfig, ...kubectl.env });
      const how = kubectl.minor >= 31 || kubectl.env.KUBECTL_PORT_FORWARD_WEBSOCKETS ? 'tunnelled through a WebSocket' : 'over plain SPDY';

      it(`kubectl 1.${kubectl.minor}: port-forward pod/etcd-cp-1 (${how}), then etcdctl endpoint status through it`, async () => {
        const forward = spawn(kubectl.bin, ['port-forward', '-n', 'kube-system', 'pod/etcd-cp-1', ':2379'], {
          env: envOf(),
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let out = '';
        let err = '';
        forward.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
        forward.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
        try {
          const port = await waitFor(async () => /Forwarding from 127\.0\.0\.1:(\d+) -> 2379/.exec(out)?.[1], {
            timeoutMs: 15_000,
            what: `kubectl's "Forwarding from" line (stderr so far: ${err.trim()})`,
          });
          const { client } = world.tls!;
          const status = await run(
            ETCDCTL,
            [
              `--endpoints=https://127.0.0.1:${port}`,
              `--cacert=${client.caFile}`,
              `--cert=${client.certFile}`,
              `--key=${client.keyFile}`,
              'endpoint',
              'status',
              '-w',
              'json',
            ],
            {
              env: { ...process.env, ETCDCTL_API: '3' },
              timeout: 15_000,
            },
          );
          expect(memberIdOf(status.stdout)).toBe(target().id);
          expect(out).toContain('Handling connection for');
          // The remote side held: no stream or forwarding error. 1.30 also logs etcdctl closing its
          // local connection when it exits, in either direction of the copy ("error copying from
          // local connection …", or "… from remote stream to local connection: … write: broken
          // pipe" when the remote's last bytes meet the closed socket): the local side, not the tunnel.
          const localClosed =
            /error copying from (local connection|remote stream to local connection)\b.*(broken pipe|connection reset by peer|use of closed network connection)/;
          const tunnel = err
            .split('\n')
            .filter((line) => !localClosed.test(line))
            .join('\n');
          expect(tunnel).not.toMatch(/error creating|error upgrading|an error occurred forwarding|lost connection to pod|remote stream to local/i);
        } finally {
          await stop(forward);
        }
      });

      const execHow = spdyKubectls.includes(kubectl) ? ' (over plain SPDY)' : '';
      it(`kubectl 1.${kubectl.minor}: exec etcdctl endpoint status in the etcd container${execHow}, exit 0`, async () => {
        const argv = [
          'exec',
          '-n',
          'kube-system',
          'etcd-cp-1',
          '-c',
          'etcd',
          '--',
          '/usr/local/bin/etcdctl',
          `--endpoints=${target().clientUrl}`,
          ...POD_PKI,
          'endpoint',
          'status',
          '-w',
          'json',
        ];
        // run() rejects on a non-zero exit, with kubectl's stderr in the error.
        const { stdout, stderr } = await run(kubectl.bin, argv, { env: envOf(), timeout: 20_000 });
        expect(memberIdOf(stdout)).toBe(target().id);
        expect(stderr).toBe('');
      });
    }

    const newest = kubectls[0]!;

    it(`kubectl 1.${newest.minor}: a pod whose port nothing listens on: the kubelet's text on the error stream, and kubectl gives up`, async () => {
      // A node and etcd pod with no etcd behind them (kube-paths.md §2b).
      world.fake.addControlPlaneNode({ name: 'cp-9', internalIp: '10.0.0.19' });
      const forward = spawn(newest.bin, ['port-forward', '-n', 'kube-system', 'pod/etcd-cp-9', ':2379'], {
        env: { ...process.env, KUBECONFIG: kubeconfig, ...newest.env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      let err = '';
      forward.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      forward.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => forward.once('exit', (code) => resolve(code)));
      try {
        const port = await waitFor(async () => /Forwarding from 127\.0\.0\.1:(\d+) -> 2379/.exec(out)?.[1], {
          timeoutMs: 15_000,
          what: `kubectl's "Forwarding from" line (stderr: ${err.trim()})`,
        });
        // One connection opens the stream pair; the kubelet's answer is on its error stream.
        const connection = net.connect(Number(port), '127.0.0.1');
        connection.on('error', () => undefined);
        try {
          expect(await exited).toBe(1);
        } finally {
          connection.destroy();
        }
        // kubectl logs it quoted, so its own quotes come escaped.
        const said = err.replaceAll('\\"', '"');
        expect(said).toMatch(
          /an error occurred forwarding \d+ -> 2379: error forwarding port 2379 to pod [0-9a-f]{64}, uid : failed to execute portforward in network namespace "host": failed to connect to localhost:2379 inside namespace "[0-9a-f]{64}"/,
        );
        expect(err).toContain('lost connection to pod');
      } finally {
        await stop(forward);
      }
    });

    it(`kubectl 1.${newest.minor}: kubelet down: the upgrade is refused with the API server's Status`, async () => {
      world.fake.kubeletDown('cp-2');
      try {
        const failed = await run(newest.bin, ['port-forward', '-n', 'kube-system', 'pod/etcd-cp-2', ':2379'], {
          env: { ...process.env, KUBECONFIG: kubeconfig, ...newest.env },
          timeout: 20_000,
        }).then(
          () => undefined,
          (error: unknown) => error as { code?: number; stderr?: string },
        );
        expect(failed?.code).toBe(1);
        expect(failed?.stderr).toContain('error upgrading connection: error dialing backend: dial tcp 10.0.0.12:10250: connect: connection refused');
      } finally {
        world.fake.heal('cp-2');
      }
    });
  });
}
