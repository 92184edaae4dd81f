// probe, plan and run reaching a cluster through Kubernetes: a real etcd lab behind the FAKE
// Kubernetes API server (test/support/fakes/kube), which serves the workload cluster (etcd pods,
// Nodes, port-forward, exec) and the management cluster (Machines, the wl-kubeconfig Secret).
// One world for the file: each test that breaks a kubelet heals it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CAPI_CLUSTER, startKubeWorld, worldTlsFlags, type KubeWorld } from '../kube/kube-world.ts';
import type { CliResult } from '../../../infra/cli/output.ts';
import { jsonOf, killService, runCli, startCli, type Service } from './support.ts';
import { resourceType } from '../../support/fakes/kube/store.ts';

const NODES = resourceType('', 'nodes')!;

interface PathJson {
  path: string;
  endpoint: string;
  ok: boolean;
  error?: string;
  says: string;
}

interface ProbeJson {
  members: {
    name: string;
    reachable: boolean;
    paths: PathJson[];
    host: { node?: string; nodeExists: boolean; pod?: string; machine?: { name: string; deleting: boolean } } | null;
  }[];
  leader: { name: string | null; consensus: string };
  quorum: { ok: boolean };
  pathLookFailure: string | null;
}

describe('probe, plan and run through the fake Kubernetes API server', () => {
  let world: KubeWorld;
  let dir: string;
  let kubeconfig: string;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-kube-probe-'));
    kubeconfig = path.join(dir, 'management.kubeconfig');
    world = await startKubeWorld(3, { kubeconfigFile: kubeconfig });
  });
  afterAll(async () => {
    await world?.down();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  // A probe's whole deadline is one call timeout; a loaded machine needs more than the default 2s.
  const SLOW = ['--timeout', '5s'];
  const capi = () => ['--kubeconfig', kubeconfig, '--cluster', CAPI_CLUSTER, ...SLOW];
  /** A member's client URL as a pattern: the relay's endpoint starts with it. */
  const clientUrlPattern = (name: string): string => world.lab.member(name).clientUrl.replaceAll('.', '\\.');

  // Each only reads, and none reads the Secret the first one counts: they run at once.
  describe.concurrent('on a healthy cluster', () => {
    it('probe --kubeconfig F --cluster wl, no --endpoints: 3 members found through their pods, each with a port-forward and an exec-relay row and where it runs', async () => {
      const run = await runCli(['probe', ...capi(), '--json']);
      expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
      const probe = jsonOf<ProbeJson>(run);
      expect(probe.members.map((m) => m.name).sort()).toEqual(['cp-1', 'cp-2', 'cp-3']);
      for (const m of probe.members) {
        expect(m.paths.map((p) => [p.path, p.ok])).toEqual([
          ['port-forward', true],
          ['exec-relay', true],
        ]);
        expect(m.paths[0]).toMatchObject({ endpoint: `kube-system/etcd-${m.name}:2379`, says: `port-forward kube-system/etcd-${m.name}:2379 answered` });
        expect(m.paths[1]!.endpoint).toMatch(new RegExp(`^${clientUrlPattern(m.name)} via kube-system/etcd-cp-\\d$`));
        expect(m.host).toEqual({
          node: m.name,
          nodeExists: true,
          pod: `kube-system/etcd-${m.name}`,
          machine: { name: world.machineOf(world.lab.members.find((l) => l.name === m.name)!), deleting: false },
        });
      }
      expect(probe.quorum.ok).toBe(true);
      expect(probe.pathLookFailure).toBeNull();
      // The workload kubeconfig came from the Secret, read once.
      expect(world.fake.requestCount('GET', `/namespaces/default/secrets/${CAPI_CLUSTER}-kubeconfig`)).toBe(1);
    });

    it('probe --kubeconfig F alone (the workload cluster) with --endpoints: direct, port-forward and exec-relay rows, Nodes and no Machines', async () => {
      // kubeadm without Cluster API: the operator gives etcd's client certificate.
      const run = await runCli(['probe', '--kubeconfig', kubeconfig, '--endpoints', world.lab.endpoints()[0]!, ...worldTlsFlags(world), ...SLOW, '--json']);
      expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
      const probe = jsonOf<ProbeJson>(run);
      expect(probe.members).toHaveLength(3);
      for (const m of probe.members) {
        expect(m.paths.map((p) => [p.path, p.ok])).toEqual([
          ['direct', true],
          ['port-forward', true],
          ['exec-relay', true],
        ]);
        expect(m.host).toEqual({ node: m.name, nodeExists: true, pod: `kube-system/etcd-${m.name}` });
      }
    });

    it('--workload-kubeconfig is used as given, and the Secret is not read', async () => {
      const before = world.fake.requestCount('GET', '/secrets/other-kubeconfig');
      const run = await runCli([
        'probe',
        '--kubeconfig',
        kubeconfig,
        '--cluster',
        'other',
        '--workload-kubeconfig',
        kubeconfig,
        '--paths',
        'exec-relay',
        ...SLOW,
        '--json',
      ]);
      expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
      const probe = jsonOf<ProbeJson>(run);
      expect(probe.members.map((m) => m.paths.map((p) => p.path))).toEqual([['exec-relay'], ['exec-relay'], ['exec-relay']]);
      // Cluster "other" has no Machines in the management cluster.
      expect(probe.members.every((m) => m.host?.machine === undefined)).toBe(true);
      expect(world.fake.requestCount('GET', '/secrets/other-kubeconfig')).toBe(before);
    });

    it('a missing <cluster>-kubeconfig Secret is a usage error naming it', async () => {
      const run = await runCli(['probe', '--kubeconfig', kubeconfig, '--cluster', 'nope']);
      expect(run.code).toBe(2);
      expect(run.stderr).toBe(
        'etcd-remediator: --cluster: Secret default/nope-kubeconfig does not exist: is nope a Cluster API cluster in namespace default? (give --namespace, or --workload-kubeconfig)\n',
      );
    });
  });

  describe('with the leader’s kubelet down', () => {
    it('with the leader’s kubelet down, the leader’s port-forward row says "error dialing backend" and its exec-relay row answers', async () => {
      const leader = await world.lab.leader();
      world.fake.kubeletDown(leader.name);
      try {
        const run = await runCli(['probe', ...capi()]);
        expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
        const lines = run.stdout.split('\n');
        const at = lines.findIndex((l) =>
          l.startsWith(`  ${leader.name} (${leader.id}): node ${leader.name}, pod kube-system/etcd-${leader.name}, machine ${world.machineOf(leader)}`),
        );
        expect(at, run.stdout).toBeGreaterThan(0);
        expect(lines[at + 1]).toMatch(new RegExp(`^    port-forward kube-system/etcd-${leader.name}:2379 refused: .*error dialing backend.*kubelet`));
        expect(lines[at + 2]).toMatch(
          new RegExp(`^    exec-relay ${clientUrlPattern(leader.name)} via kube-system/etcd-(?!${leader.name})cp-\\d answered \\(\\d+ms\\)$`),
        );
        expect(run.stdout).toContain(`leader: ${leader.name} (${leader.id}) agreed by all 3 members`);
      } finally {
        world.fake.heal(leader.name);
      }
    });

    it('plan --machine on a kubelet-down leader: a leader move over exec-relay, nothing touched', async () => {
      const leader = await world.lab.leader();
      world.fake.kubeletDown(leader.name);
      try {
        const run = await runCli(['plan', ...capi(), '--machine', world.machineOf(leader), '--election-timeout', '500ms', '--json']);
        expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
        const result = jsonOf<CliResult>(run);
        expect(result).toMatchObject({ outcome: 'planned', reason: 'LEADER_MOVE_REQUIRED', target: { memberId: leader.id, name: leader.name } });
        expect(result.message).toContain('error dialing backend');
        expect(result.message).toMatch(/over exec-relay/);
        expect((await world.lab.leader()).id).toBe(leader.id);
      } finally {
        world.fake.heal(leader.name);
      }
    });
  });

  describe('during another disruption', () => {
    it("plan --machine of a follower while another member's Node is cordoned: waits DISRUPTION_IN_PROGRESS naming the Node; uncordoned, approved", async () => {
      const leader = await world.lab.leader();
      const [target, other] = world.lab.members.filter((m) => m.id !== leader.id);
      const plan = async () => {
        const run = await runCli(['plan', ...capi(), '--machine', world.machineOf(target!), '--election-timeout', '500ms', '--json']);
        expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
        return jsonOf<CliResult>(run);
      };
      // As kubectl cordon writes it; every drain, Cluster API's included, begins with one.
      const setCordon = (cordoned: boolean) => {
        const node = world.fake.store.get(NODES, '', other!.name);
        world.fake.store.put(NODES, { ...node, spec: { ...(node.spec as object), unschedulable: cordoned } });
      };
      setCordon(true);
      try {
        const held = await plan();
        expect(held).toMatchObject({ outcome: 'planned', reason: 'DISRUPTION_IN_PROGRESS', target: { memberId: target!.id } });
        expect(held.message).toContain(`its Node ${other!.name} is cordoned (a drain stops its pods)`);
        expect(held.message).toMatch(/nothing is removed until it ends/);
      } finally {
        setCordon(false);
      }
      expect(await plan()).toMatchObject({ outcome: 'planned', reason: 'TARGET_IS_FOLLOWER' });
    });
  });

  // At once: the refusal reads another Secret than the one the first counts.
  describe.concurrent('run with a cluster reached through Kubernetes', () => {
    let service: Service | undefined;
    afterAll(() => killService(service));
    const configWith = (name: string, cluster: Record<string, unknown>): string => {
      const file = path.join(dir, `${name}.json`);
      fs.writeFileSync(
        file,
        JSON.stringify({
          state: `${name}.sqlite`,
          listen: '127.0.0.1:0',
          token: 'kube-probe-test-token-0123456789',
          clusters: [{ clusterId: 'prod', ...cluster }],
        }),
      );
      return file;
    };

    it('reads the workload kubeconfig from the Secret as it starts', async () => {
      const before = world.fake.requestCount('GET', `/secrets/${CAPI_CLUSTER}-kubeconfig`);
      service = startCli([
        'run',
        '--config',
        configWith('kube', { kubeconfig: path.basename(kubeconfig), capiCluster: CAPI_CLUSTER, paths: ['port-forward', 'exec-relay'] }),
      ]);
      await service.waitForStderr(/listening on http:\/\/127\.0\.0\.1:\d+\/events; state .*; clusters prod/);
      expect(world.fake.requestCount('GET', `/secrets/${CAPI_CLUSTER}-kubeconfig`)).toBe(before + 1);
      service.child.kill('SIGTERM');
      expect(await service.exited).toBe(0);
    });

    it('refuses a missing Secret, naming the cluster, the field and the Secret', async () => {
      const run = await runCli(['run', '--config', configWith('nope', { kubeconfig: kubeconfig, capiCluster: 'nope', namespace: 'capi' })]);
      expect(run.code).toBe(2);
      expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(run.stderr).toContain('clusters[0].capiCluster (cluster prod): Secret capi/nope-kubeconfig does not exist');
      expect(run.stderr).toContain('(give namespace, or workloadKubeconfig)');
    });
  });
});
