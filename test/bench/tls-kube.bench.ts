// What a client certificate minted per connection costs, beside the operator's own files: the
// first probe over port-forward of a TLS cluster (each member's forward mints one, an RSA 2048
// key each) and a probe after it (the connections stand; nothing is minted), side by side in one
// run on the kube world (real etcd with --client-cert-auth behind the FAKE API server), and the
// minting alone. Goals: what minting adds to a cold probe stays under a tenth of the default call
// deadline (2 s), and a warm minted probe within 10 ms of one with files (nothing is minted then; a few ms
// either way is the machine's noise).
import { createKubeEtcd } from '../../functions/adapters/kube/kube-etcd.ts';
import { mintClientCertificate } from '../../functions/adapters/kube/etcd-client-cert.ts';
import { median, timeIt } from './measure.ts';
import { startKubeWorld, worldEtcdTls, type KubeWorld } from '../integration/kube/kube-world.ts';
import { readFileSync } from 'node:fs';

const MEMBERS = 3;
const ROUNDS = 5;
const DEADLINE_MS = 5_000;
/** The policy's default callTimeoutMs: the budget a cold probe's minting must stay well inside. */
const DEFAULT_CALL_MS = 2_000;

type Access = 'minted' | 'files';

async function probeTwice(world: KubeWorld, access: Access): Promise<{ cold: number; warm: number }> {
  const kube = createKubeEtcd(access === 'minted' ? world.access : { workloadKubeconfig: world.access.workloadKubeconfig }, {
    guardPrefix: '/etcd-remediator-bench',
    callTimeoutMs: DEADLINE_MS,
    ...(access === 'files' ? worldEtcdTls(world) : {}),
  });
  try {
    const probe = async () => {
      const sample = await kube.prober.probe({ seeds: [], deadlineMs: DEADLINE_MS, paths: ['port-forward'] });
      if (sample.members.filter((m) => m.paths.some((p) => p.reachability === 'ok')).length !== MEMBERS)
        throw new Error(`${access}: not every member answered: ${JSON.stringify(sample.listFailures)}`);
    };
    return { cold: await timeIt(probe), warm: await timeIt(probe) };
  } finally {
    await kube.close();
  }
}

async function main(): Promise<void> {
  const world = await startKubeWorld(MEMBERS);
  let met = true;
  try {
    const ca = world.tls!;
    const key = readFileSync(world.lab.tls!.caKeyFile);
    const mint: number[] = [];
    for (let i = 0; i < ROUNDS; i++) mint.push(await timeIt(() => mintClientCertificate(Buffer.from(ca.caPem), key)));
    console.log(`members=${MEMBERS} rounds=${ROUNDS} (median) mint_rsa2048_ms=${median(mint).toFixed(1)}`);
    const runs: Record<Access, { cold: number[]; warm: number[] }> = { minted: { cold: [], warm: [] }, files: { cold: [], warm: [] } };
    for (let i = 0; i < ROUNDS; i++) {
      for (const access of ['files', 'minted'] as const) {
        const { cold, warm } = await probeTwice(world, access);
        runs[access].cold.push(cold);
        runs[access].warm.push(warm);
      }
    }
    for (const phase of ['cold', 'warm'] as const) {
      const files = median(runs.files[phase]);
      const minted = median(runs.minted[phase]);
      const ratio = minted / Math.max(files, 1);
      const added = minted - files;
      const within = added <= (phase === 'cold' ? DEFAULT_CALL_MS / 10 : 10);
      const goal = `added<=${phase === 'cold' ? DEFAULT_CALL_MS / 10 : 10}ms`;
      met &&= within;
      console.log(
        `probe ${phase} files_ms=${files.toFixed(0)} minted_ms=${minted.toFixed(0)} ratio=${ratio.toFixed(2)} added_ms=${added.toFixed(0)} goal ${goal} ${within ? 'met' : 'MISSED'}`,
      );
    }
  } finally {
    await world.down();
  }
  console.log(met ? 'goal met' : 'goal missed');
  process.exitCode = met ? 0 : 1;
}

await main();
