// Probe latency over the kube paths with k of 5 members blackholed: the same probe over
// port-forward and the exec relay (through the FAKE API server, real etcd and etcdctl behind it)
// beside the direct path, side by side in one run. The kube probe first reads the workload's etcd
// pods and Nodes, then every path of every member at once, all under the one deadline.
// Goal: within 1.2 x one call deadline for every k, as the direct probe is.
import { performance } from 'node:perf_hooks';
import { createKubeEtcd } from '../../functions/adapters/kube/kube-etcd.ts';
import { createEtcd3Transport, createProber, directPaths } from '../../functions/adapters/etcd/index.ts';
import { startLab } from '../../infra/lab/lab.ts';
import { startKubeApiFake } from '../support/fakes/kube/api-server.ts';

const MEMBERS = 5;
const DEADLINE_MS = 1_000;
const ROUNDS = 3;

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function timeIt(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

async function main(): Promise<void> {
  const lab = await startLab({ members: MEMBERS, namePrefix: 'cp-' });
  const fake = await startKubeApiFake();
  lab.members.forEach((member, index) => {
    fake.addControlPlaneNode({ name: member.name, internalIp: `10.0.0.${11 + index}`, clientUrl: member.clientUrl });
    const proxy = new URL(member.clientUrl);
    fake.setUpstream(member.name, { host: proxy.hostname, port: Number(proxy.port) });
  });
  const transport = createEtcd3Transport();
  const direct = createProber(transport, directPaths);
  const kube = createKubeEtcd({ workloadKubeconfig: fake.kubeconfigYaml() }, { guardPrefix: '/etcd-remediator', callTimeoutMs: DEADLINE_MS });
  const bound = 1.2 * DEADLINE_MS;
  let allWithin = true;
  try {
    console.log(`members=${MEMBERS} call_deadline_ms=${DEADLINE_MS} rounds=${ROUNDS} (median) bound_ms=${bound} kube_paths=port-forward,exec`);
    for (let k = 0; k <= 3; k++) {
      for (let i = 0; i < MEMBERS; i++) await lab.fault(lab.members[i]!.name, i < k ? 'blackhole' : 'heal');
      const viaKube: number[] = [];
      const viaDirect: number[] = [];
      let answered = 0;
      for (let r = 0; r < ROUNDS; r++) {
        viaKube.push(
          await timeIt(async () => {
            const sample = await kube.prober.probe({ seeds: [], deadlineMs: DEADLINE_MS, paths: ['port-forward', 'exec'] });
            answered = sample.members.filter((m) => m.status).length;
          }),
        );
        viaDirect.push(await timeIt(() => direct.probe({ seeds: lab.endpoints(), deadlineMs: DEADLINE_MS })));
      }
      const o = median(viaKube);
      const d = median(viaDirect);
      const within = o <= bound;
      allWithin &&= within;
      console.log(
        `probe k=${k} kube_ms=${o.toFixed(0)} direct_ms=${d.toFixed(0)} ratio=${(o / d).toFixed(2)} ` +
          `kube_vs_deadline=${(o / DEADLINE_MS).toFixed(2)} answered=${answered}/${MEMBERS} within_bound=${within ? 'yes' : 'NO'}`,
      );
    }
  } finally {
    try {
      await Promise.all([transport.close(), kube.close()]);
      await fake.stop();
    } finally {
      await lab.down();
    }
  }
  console.log(allWithin ? 'goal met: every kube probe within 1.2 x deadline' : 'goal MISSED: see within_bound=NO rows');
  process.exitCode = allWithin ? 0 : 1;
}

await main();
