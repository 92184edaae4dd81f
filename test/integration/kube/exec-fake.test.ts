// client-node's Exec, unmodified, against the fake API server's exec subresource: the real
// etcdctl runs "in" a healthy member's pod, aimed at another lab member's client URL, and its
// output goes through the relay's parsers. Node faults follow ../shared/notes/kube-paths.md.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Exec, type V1Status } from '@kubernetes/client-node';
import { createEtcd3Transport } from '../../../functions/adapters/etcd/index.ts';
import { endpointStatusArgv, isEtcdFailure, parseEndpointStatus, type RelayCall } from '../../../functions/adapters/kube/exec-relay/exec-relay-etcdctl.ts';
import { isObject, parseJsonNumbersAsText } from '../../../functions/adapters/kube/exec-relay/exec-relay-json.ts';
import { collector } from '../../../functions/adapters/kube/streams/pod-streams-client.ts';
import { classifyFailure } from '../../../functions/core/common/classify.ts';
import type { MemberStatus } from '../../../functions/core/common/types.ts';
import { startLab, type Lab, type LabMember } from '../../../infra/lab/lab.ts';
import { startKubeApiFake, type KubeApiFake } from '../../support/fakes/kube/api-server.ts';
import { probeUpgrade } from './upgrade-probe.ts';

const NODES = ['cp-1', 'cp-2', 'cp-3'] as const;
const RELAY_POD = 'etcd-cp-1';
const RELAY_NODE_IP = '10.0.0.11';

interface ExecRun {
  stdout: string;
  stderr: string;
  status: V1Status;
  protocol: string;
  /** The WebSocket close code the server ended with (RFC 6455 §7.4; 1005 means it sent none). */
  closeCode: number;
}

/** Runs argv in the pod through client-node's Exec; resolves with the channel-3 Status. */
async function execIn(fake: KubeApiFake, pod: string, argv: string[]): Promise<ExecRun> {
  const [stdout, stderr] = [collector(), collector()];
  let onStatus: (status: V1Status) => void = () => undefined;
  const statusArrived = new Promise<V1Status>((resolve) => (onStatus = resolve));
  const ws = await new Exec(fake.kubeConfig()).exec('kube-system', pod, 'etcd', argv, stdout.stream, stderr.stream, null, false, (s) => onStatus(s));
  // client-node drops errors after open (§4): a close without a Status must fail the test, not hang it.
  const closed = new Promise<number>((resolve) => ws.on('close', (code: number) => resolve(code)));
  const closedEarly = closed.then((): Promise<never> => new Promise((_, reject) => setImmediate(() => reject(new Error('socket closed without a Status')))));
  const status = await Promise.race([statusArrived, closedEarly]);
  return { stdout: stdout.text(), stderr: stderr.text(), status, protocol: ws.protocol, closeCode: await closed };
}

const exitCodeOf = (status: V1Status): number => (status.status === 'Success' ? 0 : Number(status.details?.causes?.[0]?.message));

describe('kube fake: exec runs the real etcdctl', () => {
  let lab: Lab;
  let fake: KubeApiFake;
  const member = (node: string): LabMember => lab.members[NODES.indexOf(node as (typeof NODES)[number])]!;
  const relayCall = (target: LabMember): RelayCall => ({ endpoint: target.clientUrl, commandTimeoutMs: 800, dialTimeoutMs: 1_000, tls: null });

  beforeAll(async () => {
    lab = await startLab({ members: 3 });
    fake = await startKubeApiFake();
    NODES.forEach((name, index) => fake.addControlPlaneNode({ name, internalIp: `10.0.0.${11 + index}` }));
  });
  afterAll(async () => {
    await fake?.stop();
    await lab?.down();
  });

  it('relays `endpoint status` through a healthy pod to another member, parsed to that member’s status', async () => {
    const target = member('cp-2');
    const run = await execIn(fake, RELAY_POD, endpointStatusArgv(relayCall(target)));
    expect(run.status).toEqual({ metadata: {}, status: 'Success' });
    // wsstream's Close: a normal closure, 1000, as client-go expects.
    expect(run.closeCode).toBe(1000);
    // client-node offers v5 first, so the request went through the API server's translator (§0.3).
    expect(run.protocol).toBe('v5.channel.k8s.io');
    // The answering member is the target, by the member_id in etcd's response header.
    const [entry] = parseJsonNumbersAsText(run.stdout) as unknown[];
    const header = isObject(entry) && isObject(entry['Status']) ? entry['Status']['header'] : undefined;
    expect(isObject(header) ? BigInt(String(header['member_id'])).toString(16) : undefined).toBe(target.id);
    const relayed = parseEndpointStatus(run.stdout, run.stderr, exitCodeOf(run.status));
    if (isEtcdFailure(relayed)) throw new Error(`expected a status: ${JSON.stringify(relayed)}`);
    const transport = createEtcd3Transport();
    let direct: MemberStatus;
    try {
      direct = await transport.client({ endpoint: target.clientUrl, path: 'direct' }).status(800);
    } finally {
      await transport.close();
    }
    const stable = ({ leaderId, raftTerm, alarms, errors, version, isLearner, clusterId }: MemberStatus) => ({
      leaderId,
      raftTerm,
      alarms,
      errors,
      version,
      isLearner,
      clusterId,
    });
    expect(stable(relayed)).toEqual(stable(direct));
    expect(relayed.leaderId).toBe((await lab.leader()).id);
  });

  it('relays to a cut member: NonZeroExitCode, parsed to the refused class', async () => {
    const target = member('cp-3');
    await lab.fault(target.name, 'cut');
    try {
      const run = await execIn(fake, RELAY_POD, endpointStatusArgv(relayCall(target)));
      expect(run.status).toMatchObject({ status: 'Failure', reason: 'NonZeroExitCode' });
      const relayed = parseEndpointStatus(run.stdout, run.stderr, exitCodeOf(run.status));
      if (!isEtcdFailure(relayed)) throw new Error(`expected a failure: ${JSON.stringify(relayed)}`);
      expect(classifyFailure(relayed).reason).toBe('PATH_REFUSED');
    } finally {
      await lab.fault(target.name, 'heal');
    }
  });

  it('writes the v5 translator’s NonZeroExitCode Status for a non-zero exit', async () => {
    // etcdctl exits 128 on a usage error (`get` with no key).
    const run = await execIn(fake, RELAY_POD, ['etcdctl', `--endpoints=${member('cp-2').clientUrl}`, 'get']);
    expect(run.stderr).toContain('get command needs one argument');
    expect(run.status).toEqual({
      metadata: {},
      status: 'Failure',
      message: 'command terminated with non-zero exit code: command terminated with exit code 128',
      reason: 'NonZeroExitCode',
      details: { causes: [{ reason: 'ExitCode', message: '128' }] },
    });
  });

  it('refuses an exec without an Upgrade header, as upgradeaware.go does (§3)', async () => {
    const response = await fetch(`${fake.server}/api/v1/namespaces/kube-system/pods/${RELAY_POD}/exec?command=etcdctl&container=etcd&stdout=1`, {
      method: 'POST',
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ kind: 'Status', message: 'Upgrade request required', reason: 'BadRequest' });
  });

  describe('faults on the relay pod’s node', () => {
    const path = `/api/v1/namespaces/kube-system/pods/${RELAY_POD}/exec?command=etcdctl&command=version&container=etcd&stdout=true&stderr=true`;

    it('kubelet down: v5 upgrades and fails on channel 3; without v5, a 500 JSON Status before the upgrade (§1)', async () => {
      fake.kubeletDown('cp-1');
      try {
        const run = await execIn(fake, RELAY_POD, ['etcdctl', 'version']);
        expect(run.stdout).toBe('');
        expect(run.status).toMatchObject({ status: 'Failure', reason: 'InternalError', code: 500 });
        expect(run.closeCode).toBe(1000);
        expect(run.status.message).toMatch(
          /^Internal error occurred: error sending request: Post "https:\/\/10\.0\.0\.11:10250\/exec\/kube-system\/etcd-cp-1\/etcd\?command=etcdctl&command=version&error=1&output=1": dial tcp 10\.0\.0\.11:10250: connect: connection refused$/,
        );
        expect(await probeUpgrade(fake.kubeConfig(), path)).toEqual({
          upgraded: false,
          status: 500,
          contentType: 'application/json',
          body: JSON.stringify({
            kind: 'Status',
            apiVersion: 'v1',
            metadata: {},
            status: 'Failure',
            message: `error dialing backend: dial tcp ${RELAY_NODE_IP}:10250: connect: connection refused`,
            code: 500,
          }),
        });
        // Only that node: a pod elsewhere still relays.
        expect((await execIn(fake, 'etcd-cp-2', ['etcdctl', 'version'])).status.status).toBe('Success');
      } finally {
        fake.heal('cp-1');
      }
    });

    it('containerd down: v5 fails on channel 3 with containerd’s text; without v5, a 500 plain-text body (§2)', async () => {
      fake.containerdDown('cp-1');
      try {
        const run = await execIn(fake, RELAY_POD, ['etcdctl', 'version']);
        expect(run.status).toMatchObject({ status: 'Failure', reason: 'InternalError', code: 500 });
        expect(run.status.message).toBe(
          'Internal error occurred: unable to upgrade connection: rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: dial unix /var/run/containerd/containerd.sock: connect: no such file or directory"',
        );
        const probe = await probeUpgrade(fake.kubeConfig(), path);
        expect(probe).toMatchObject({ upgraded: false, status: 500, contentType: 'text/plain; charset=utf-8' });
        expect(probe.upgraded ? '' : probe.body).toMatch(/^rpc error: code = Unavailable .*containerd\.sock: connect: no such file or directory"$/);
      } finally {
        fake.heal('cp-1');
      }
      // Healed: the v4 path upgrades again.
      expect(await probeUpgrade(fake.kubeConfig(), path)).toEqual({ upgraded: true, protocol: 'v4.channel.k8s.io' });
    });
  });
});
