// `pause`: holds every step that changes a cluster (leader moves, removals, the actuator), for one
// cluster or the whole fleet, on a local state file or a deployed stack's table. Probes and plans
// go on and say PAUSED with who, when and why. Removals already holding a slot finish.
import type { FleetMark } from '../../functions/ports/fleet.ts';
import { parseFlags, PROGRAM, requiredFlag } from './args.ts';
import { failedLines, holdClusters, holdTargetFlags, holdTargetHelp, storeOf, writeHolds } from './etcd-holds.ts';
import { defaultWho, fleetTargetFlags, openFleetTarget, textFlag } from './fleet-target.ts';
import { EXIT, printJson } from './output.ts';

export const help = `usage: ${PROGRAM} pause [--cluster ID] --why TEXT [--by NAME] (--state FILE | --table NAME [--region R] | --config FILE)
                      [--endpoints URL[,URL…] | --kubeconfig F …] [--json]

Pauses remediation fleet-wide, or of one cluster with --cluster: no leader is moved, no member
removed, no machine replaced until \`${PROGRAM} resume\`. Probes and plans go on and say PAUSED,
naming who paused, when and why. Removals already under way (holding a slot) finish.

The pause is written into the state file (or table), which every remediator of that store reads,
and, given the cluster's access (--config, --endpoints or --kubeconfig), into each cluster's own
etcd beside the cluster lock, which every remediator of the cluster reads, whatever its state file.

  --cluster ID    pause only this cluster (default: the whole fleet)
  --why TEXT      why, in your words: every PAUSED message quotes it (required)
  --by NAME       who pauses (default: $USER@hostname)
  --state FILE    the local state file of run or remediate
  --table NAME    a deployed stack's DynamoDB table
  --region R      the table's AWS region (default: AWS_REGION or the AWS config)
${holdTargetHelp}
  --json          print the pause as JSON`;

const options = {
  why: { type: 'string' },
  by: { type: 'string' },
  ...fleetTargetFlags,
  ...holdTargetFlags,
} as const;

export async function run(argv: string[]): Promise<number> {
  const { values } = parseFlags('pause', argv, options);
  if (values.help) {
    process.stdout.write(`${help}\n`);
    return EXIT.ok;
  }
  const why = textFlag('why', requiredFlag('why', values.why, '"zone b unreachable from the management plane"'))!;
  const by = textFlag('by', values.by) ?? defaultWho();
  const clusterId = textFlag('cluster', values.cluster);
  const clusters = await holdClusters(values, clusterId);
  const target = await openFleetTarget(storeOf(values));
  try {
    const now = Date.now();
    const mark: FleetMark = { by, at: now, why };
    await target.records.setPause(clusterId, mark);
    // Into etcd after the store: a pause that reached only the store still holds every remediator of it.
    const etcd = await writeHolds(clusters, clusterId === undefined ? 'fleet-pause' : 'pause', { ...mark, where: target.records.where });
    const inFlight = await target.records.removalSlots(now);
    const scope = clusterId === undefined ? 'the fleet' : `cluster ${clusterId}`;
    const alsoIn = etcd.filter((w) => w.ok).map((w) => w.where);
    if (values.json) printJson({ paused: clusterId ?? 'fleet', ...mark, where: target.where, etcd, removalsInFlight: inFlight });
    else {
      const finishing =
        inFlight.length > 0
          ? `; ${inFlight.length} removal${inFlight.length === 1 ? '' : 's'} already under way finish${inFlight.length === 1 ? 'es' : ''} (${inFlight.map((s) => `cluster ${s.clusterId}, incident ${s.owner}`).join('; ')})`
          : '';
      const etcdToo = alsoIn.length > 0 ? ` and in the ${alsoIn.join(', the ')}` : '';
      process.stdout.write(`paused ${scope} in ${target.where}${etcdToo} by ${by} at ${new Date(now).toISOString()}: ${why}${finishing}\n`);
    }
    for (const line of failedLines(etcd, false)) process.stderr.write(`${PROGRAM}: ${line}\n`);
    if (clusters.length === 0)
      process.stderr.write(
        `${PROGRAM}: note: only remediators of ${target.where} see this pause; with --config, --endpoints or --kubeconfig it is also written into the cluster's etcd, where every remediator sees it\n`,
      );
    return etcd.every((w) => w.ok) ? EXIT.ok : EXIT.error;
  } finally {
    await target.close();
  }
}
