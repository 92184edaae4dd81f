// Probe latency over the kube paths with k of 5 members blackholed: the same probe over
// port-forward and the exec relay (through the FAKE API server, real etcd and etcdctl behind it)
// beside the direct path, side by side in one run. The kube probe first reads the workload's etcd
// pods and Nodes, then every path of every member at once, all under the one deadline.
// Goal: within 1.2 x one call deadline for every k, as the direct probe is.
import { createKubeEtcd } from '../../functions/adapters/kube/kube-etcd.ts';
import { createEtcd3Transport, createProber, directPaths } from '../../functions/adapters/etcd/index.ts';
import { median, timeIt } from './measure.ts';
import { startKubeWorld, worldEtcdTls } from '../integration/kube/kube-world.ts';

const MEMBERS = 5;
const DEADLINE_MS = 1_000;
const ROUNDS = 3;

async function main(): Promise<void> {
  // Members named after their nodes, behind the fake API server (their Machines are not used here).
  const world = await startKubeWorld(MEMBERS);
  const { lab, access } = world;
  // kubeadm without Cluster API: the operator's etcd client certificate, on both sides.
  const transport = createEtcd3Transport(worldEtcdTls(world));
  const direct = createProber(transport, directPaths);
  const kube = createKubeEtcd(
    { workloadKubeconfig: access.workloadKubeconfig },
    { guardPrefix: '/etcd-remediator', callTimeoutMs: DEADLINE_MS, ...worldEtcdTls(world) },
  );
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
            const sample = await kube.prober.probe({ seeds: [], deadlineMs: DEADLINE_MS, paths: ['port-forward', 'exec-relay'] });
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
    } finally {
      await world.down();
    }
  }
  console.log(allWithin ? 'goal met: every kube probe within 1.2 x deadline' : 'goal MISSED: see within_bound=NO rows');
  process.exitCode = allWithin ? 0 : 1;
}

await main();
