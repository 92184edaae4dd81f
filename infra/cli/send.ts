// `send`: puts one MemberUnhealthy on a deployed remediation bus (EventBridge PutEvents), validated
// against the catalogue first. It reaches no etcd: the functions on AWS take it from there.
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { makeEvent, type DetailOf } from '../../events/catalogue.ts';
import { selectorKeys, type SelectorKey } from '../../events/schemas/common.ts';
import { parseEvent } from '../../events/validate.ts';
import { createEventBridgeBus } from '../../functions/adapters/aws/eventbridge-bus.ts';
import type { Bus } from '../../functions/ports/bus.ts';
import { parseFlags, PROGRAM, requiredFlag, UsageError } from './args.ts';
import { EXIT, printJson } from './output.ts';

export const help = `usage: ${PROGRAM} send --bus NAME --cluster ID --target NAME|KEY=VALUE [options]

Puts one MemberUnhealthy event on the remediation bus of a deployed stack (EventBridge
PutEvents). The functions there open an incident for the member, or join the one open for it.
Credentials, and the endpoint when overridden, come from the usual AWS environment and config.

  --bus NAME               the event bus, by name or ARN (required)
  --cluster ID             the cluster as registered in the cluster directory (required)
  --target NAME|KEY=VALUE  the member: a bare value is an etcd member name; or one of
                           ${selectorKeys.map((k) => `${k}=`).join(', ')}
                           e.g. memberId=8e9e05c52164694d or instanceId=i-0abc123def4567890 (required)
  --reason TEXT            why it is unhealthy, in your words (default: reported by hand)
  --region R               the AWS region (default: AWS_REGION or the AWS config)
  --json                   print the event sent as JSON`;

const options = {
  bus: { type: 'string' },
  cluster: { type: 'string' },
  target: { type: 'string' },
  reason: { type: 'string' },
  region: { type: 'string' },
  json: { type: 'boolean' },
} as const;

/** `memberId=…` names the selector; a bare value is a member name, as `remediate` takes it without a member list. */
export function targetFromFlag(value: string): { target: Partial<Record<SelectorKey, string>>; note?: string } {
  const eq = value.indexOf('=');
  if (eq > 0) {
    const key = value.slice(0, eq);
    if (!(selectorKeys as readonly string[]).includes(key)) {
      throw new UsageError(
        `--target: ${JSON.stringify(key)} is not a way to name a member (use NAME, or one of ${selectorKeys.map((k) => `${k}=`).join(', ')})`,
      );
    }
    return { target: { [key]: value.slice(eq + 1) } };
  }
  const note = /^[0-9a-f]{1,16}$/i.test(value) ? `--target ${value} is taken as a member name; write memberId=${value} if it is a member id` : undefined;
  return { target: { memberName: value }, ...(note ? { note } : {}) };
}

/** The event `send` puts on the bus; a usage error names the field when it is invalid. */
export function memberUnhealthyFromFlags(
  values: { cluster?: string; target?: string; reason?: string },
  now: number,
): { detail: DetailOf<'MemberUnhealthy'>; note?: string } {
  const clusterId = requiredFlag('cluster', values.cluster, 'prod-eu-1');
  const { target, note } = targetFromFlag(requiredFlag('target', values.target, 'etcd-1'));
  const at = new Date(now).toISOString();
  const parsed = parseEvent('MemberUnhealthy', {
    clusterId,
    attempt: 0,
    at,
    target,
    reason: values.reason ?? 'reported by hand',
    source: 'cli',
    observedAt: at,
  });
  if (!parsed.ok) throw new UsageError(flagNamed(parsed.error.summary));
  return { detail: parsed.event.detail as DetailOf<'MemberUnhealthy'>, ...(note ? { note } : {}) };
}

/** The event's field as the flag that set it: `target.memberId: …` reads `--target memberId=: …`. */
const flagNamed = (summary: string): string =>
  summary
    .replace(/^MemberUnhealthy is invalid: /, '')
    .replace(/\bclusterId:/g, '--cluster:')
    .replace(/\breason:/g, '--reason:')
    .replace(/\btarget\.(\w+):/g, '--target $1=:')
    .replace(/\btarget:/g, '--target:');

export async function send(argv: string[], busFor: (busName: string, region?: string) => Bus = eventBridgeBus): Promise<number> {
  const { values } = parseFlags('send', argv, options);
  if (values.help) {
    process.stdout.write(`${help}\n`);
    return EXIT.ok;
  }
  const busName = requiredFlag('bus', values.bus, 'etcd-remediator');
  const { detail, note } = memberUnhealthyFromFlags(values, Date.now());
  if (note) process.stderr.write(`${note}\n`);
  try {
    await busFor(busName, values.region).publish(makeEvent('MemberUnhealthy', detail));
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // The SDK's own words for this do not say which flag would fix it.
    if (/region is missing|region="" /i.test(message)) throw new UsageError('--region is required: no region in AWS_REGION or the AWS config');
    throw new Error(`PutEvents on bus ${busName} failed: ${message}`, { cause: error });
  }
  if (values.json) printJson(detail);
  else
    process.stdout.write(
      `sent MemberUnhealthy for ${Object.entries(detail.target)
        .map(([k, v]) => `${k} ${v}`)
        .join('')} of cluster ${detail.clusterId} to bus ${busName}\n`,
    );
  return EXIT.ok;
}

const eventBridgeBus = (busName: string, region?: string): Bus =>
  // Without --region the SDK takes AWS_REGION, then the AWS config, as the aws CLI does.
  createEventBridgeBus({ client: new EventBridgeClient(region ? { region } : {}), busName });

export const run = (argv: string[]): Promise<number> => send(argv);
