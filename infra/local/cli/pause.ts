// `pause`: holds every step that changes a cluster (leader moves, removals, the actuator), for one
// cluster or the whole fleet, on a local state file or a deployed stack's table. Probes and plans
// go on and say PAUSED with who, when and why. Removals already holding a slot finish.
import type { FleetMark } from '../../../functions/ports/fleet.ts';
import { parseFlags, PROGRAM, requiredFlag } from './args.ts';
import { defaultWho, fleetTargetFlags, openFleetTarget, textFlag } from './fleet-target.ts';
import { EXIT, printJson } from './output.ts';

export const help = `usage: ${PROGRAM} pause [--cluster ID] --why TEXT [--by NAME] (--state FILE | --table NAME [--region R]) [--json]

Pauses remediation fleet-wide, or of one cluster with --cluster: no leader is moved, no member
removed, no machine replaced until \`${PROGRAM} resume\`. Probes and plans go on and say PAUSED,
naming who paused, when and why. Removals already under way (holding a slot) finish.

  --cluster ID    pause only this cluster (default: the whole fleet)
  --why TEXT      why, in your words: every PAUSED message quotes it (required)
  --by NAME       who pauses (default: $USER@hostname)
  --state FILE    the local state file of run or remediate
  --table NAME    a deployed stack's DynamoDB table
  --region R      the table's AWS region (default: AWS_REGION or the AWS config)
  --json          print the pause as JSON`;

const options = {
  cluster: { type: 'string' },
  why: { type: 'string' },
  by: { type: 'string' },
  json: { type: 'boolean' },
  ...fleetTargetFlags,
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
  const target = openFleetTarget(values);
  try {
    const now = Date.now();
    const mark: FleetMark = { by, at: now, why };
    await target.records.setPause(clusterId, mark);
    const inFlight = await target.records.removalSlots(now);
    const scope = clusterId === undefined ? 'the fleet' : `cluster ${clusterId}`;
    if (values.json) printJson({ paused: clusterId ?? 'fleet', ...mark, where: target.where, removalsInFlight: inFlight });
    else {
      const finishing = inFlight.length > 0 ? `; ${inFlight.length} removal${inFlight.length === 1 ? '' : 's'} already under way finish${inFlight.length === 1 ? 'es' : ''} (${inFlight.map((s) => `cluster ${s.clusterId}, incident ${s.owner}`).join('; ')})` : '';
      process.stdout.write(`paused ${scope} in ${target.where} by ${by} at ${new Date(now).toISOString()}: ${why}${finishing}\n`);
    }
    return EXIT.ok;
  } finally {
    await target.close();
  }
}
