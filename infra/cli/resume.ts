// `resume`: lifts a pause of the fleet or of one cluster, or ends a storm now (--storm, recorded
// with who, when and why: openings before it no longer count toward the storm guard).
import { parseFlags, PROGRAM, UsageError } from './args.ts';
import { failedLines, holdClusters, holdTargetFlags, holdTargetHelp, storeOf, writeHolds, type HoldWritten } from './etcd-holds.ts';
import { defaultWho, fleetTargetFlags, openFleetTarget, textFlag } from './fleet-target.ts';
import { EXIT, printJson } from './output.ts';

export const help = `usage: ${PROGRAM} resume [--cluster ID | --storm] [--why TEXT] [--by NAME] (--state FILE | --table NAME [--region R] | --config FILE)
                       [--endpoints URL[,URL…] | --kubeconfig F …] [--json]

Lifts the fleet-wide pause, or with --cluster the pause of one cluster. With --storm, ends a fleet
storm now: the removals it deferred go on at their next look, and only clusters that fail from
now on count toward a new storm. Use it when the failures are real (not the management plane
losing its path to a zone).

  --cluster ID    lift the pause of this cluster
  --storm         end the storm guard's deferral now
  --why TEXT      why, recorded with a storm's end (default: ended by hand)
  --by NAME       who (default: $USER@hostname)
  --state FILE    the local state file of run or remediate
  --table NAME    a deployed stack's DynamoDB table
  --region R      the table's AWS region (default: AWS_REGION or the AWS config)
${holdTargetHelp}
  --json          print what was done as JSON`;

const options = {
  storm: { type: 'boolean' },
  why: { type: 'string' },
  by: { type: 'string' },
  ...fleetTargetFlags,
  ...holdTargetFlags,
} as const;

export async function run(argv: string[]): Promise<number> {
  const { values } = parseFlags('resume', argv, options);
  if (values.help) {
    process.stdout.write(`${help}\n`);
    return EXIT.ok;
  }
  if (values.storm && values.cluster !== undefined) throw new UsageError('--storm and --cluster: a storm is the fleet’s; give one');
  const clusterId = textFlag('cluster', values.cluster);
  const by = textFlag('by', values.by) ?? defaultWho();
  const why = textFlag('why', values.why);
  const clusters = await holdClusters(values, clusterId);
  const target = await openFleetTarget(storeOf(values));
  try {
    const now = Date.now();
    if (values.storm) {
      const mark = { by, at: now, why: why ?? 'ended by hand' };
      await target.records.endStorm(mark);
      const etcd = await writeHolds(clusters, 'storm', null);
      if (values.json) printJson({ stormEnded: mark, where: target.where, etcd });
      else
        process.stdout.write(
          `storm ended in ${target.where}${liftedIn(etcd)} by ${by} at ${new Date(now).toISOString()}: deferred removals go on at their next look\n`,
        );
      return said(etcd);
    }
    const lifted = await target.records.setPause(clusterId, null);
    const etcd = await writeHolds(clusters, clusterId === undefined ? 'fleet-pause' : 'pause', null);
    const scope = clusterId === undefined ? 'the fleet' : `cluster ${clusterId}`;
    const anyLifted = lifted || etcd.some((w) => w.changed);
    if (values.json) printJson({ resumed: clusterId ?? 'fleet', wasPaused: anyLifted, by, at: now, where: target.where, etcd });
    else
      process.stdout.write(
        anyLifted
          ? `resumed ${scope} in ${target.where}${liftedIn(etcd)}: paused steps go on at their next look\n`
          : `${scope} was not paused in ${target.where}${clusters.length > 0 ? ' nor in its etcd' : ''}; nothing to resume\n`,
      );
    return said(etcd);
  } finally {
    await target.close();
  }
}

/**
 * The clusters' etcd where a hold was lifted, and where none stood any longer (lifted already by the
 * store that wrote it, or lapsed), for the sentence: every etcd that answered is named either way.
 */
const liftedIn = (etcd: readonly HoldWritten[]): string => {
  const lifted = etcd.filter((w) => w.ok && w.changed).map((w) => w.where);
  const clear = etcd.filter((w) => w.ok && !w.changed).map((w) => w.where);
  return `${lifted.length > 0 ? ` and in the ${lifted.join(', the ')}` : ''}${clear.length > 0 ? ` (none stood in the ${clear.join(', the ')})` : ''}`;
};

/** Each cluster whose etcd could not be written is said on stderr: exit 1, since a hold may still stand there. */
function said(etcd: readonly HoldWritten[]): number {
  for (const line of failedLines(etcd, true)) process.stderr.write(`${PROGRAM}: ${line}\n`);
  return etcd.every((w) => w.ok) ? EXIT.ok : EXIT.error;
}
