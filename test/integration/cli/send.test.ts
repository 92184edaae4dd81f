// `send` through the real SDK client to the EventBridge fake: one PutEvents, one MemberUnhealthy,
// on the bus named, and the same one-line usage errors as every command.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detailSchemas, EVENT_SOURCE } from '../../../events/catalogue.ts';
import { startEventBridgeFake, type EventBridgeFake } from '../../support/fakes/eventbridge-fake.ts';
import { runCli } from './support.ts';

let fake: EventBridgeFake;
let env: Record<string, string>;

beforeAll(async () => {
  fake = await startEventBridgeFake({ buses: ['remediation'] });
  env = { AWS_ENDPOINT_URL_EVENTBRIDGE: fake.endpoint, AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test', AWS_REGION: 'eu-west-1' };
});
afterAll(async () => fake?.close());

const sent = () => fake.calls.flatMap((c) => c.entries);

describe('etcd-remediator send', () => {
  it('puts one MemberUnhealthy, valid by the catalogue, on the bus', async () => {
    const before = Date.now();
    const run = await runCli(['send', '--bus', 'remediation', '--cluster', 'prod-eu-1', '--target', 'etcd-1', '--reason', 'node NotReady for 5m'], { env });
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toBe('sent MemberUnhealthy for memberName etcd-1 of cluster prod-eu-1 to bus remediation\n');
    const [entry, ...more] = sent();
    expect(more).toEqual([]);
    expect(entry).toMatchObject({ Source: EVENT_SOURCE, DetailType: 'MemberUnhealthy', EventBusName: 'remediation' });
    const detail = detailSchemas.MemberUnhealthy.parse(JSON.parse(entry!.Detail!));
    expect(detail).toMatchObject({ clusterId: 'prod-eu-1', attempt: 0, target: { memberName: 'etcd-1' }, reason: 'node NotReady for 5m', source: 'cli' });
    expect(Date.parse(detail.observedAt)).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
    expect(fake.accepted.at(-1)?.busName).toBe('remediation');
  });

  it('names the member by any selector; --json prints the detail sent', async () => {
    const run = await runCli(['send', '--bus', 'remediation', '--cluster', 'prod-eu-1', '--target', 'instanceId=i-0a1b2c3d4e5f60718', '--json'], { env });
    expect(run.code).toBe(0);
    const printed = JSON.parse(run.stdout) as { target: unknown; reason: string };
    expect(printed).toMatchObject({ target: { instanceId: 'i-0a1b2c3d4e5f60718' }, reason: 'reported by hand' });
    expect(JSON.parse(sent().at(-1)!.Detail!)).toEqual(printed);
  });

  it('a bare value that looks like a member id is sent as a name, and says so', async () => {
    const run = await runCli(['send', '--bus', 'remediation', '--cluster', 'c', '--target', '8e9e05c52164694d'], { env });
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('--target 8e9e05c52164694d is taken as a member name; write memberId=8e9e05c52164694d if it is a member id\n');
  });

  it('a bus that does not exist: exit 1, one line naming the bus', async () => {
    const run = await runCli(['send', '--bus', 'nope', '--cluster', 'c', '--target', 'etcd-1'], { env });
    expect(run.code).toBe(1);
    expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(/^etcd-remediator: PutEvents on bus nope failed: .*ResourceNotFoundException/);
  });

  it.each([
    { args: ['--cluster', 'c', '--target', 'etcd-1'], names: '--bus is required' },
    { args: ['--bus', 'remediation', '--target', 'etcd-1'], names: '--cluster is required' },
    { args: ['--bus', 'remediation', '--cluster', 'c'], names: '--target is required' },
    { args: ['--bus', 'remediation', '--cluster', 'c', '--target', 'hostName=x'], names: '--target: "hostName" is not a way to name a member' },
    { args: ['--bus', 'remediation', '--cluster', 'c', '--target', 'memberId=xyz'], names: '--target memberId=: must be a member id' },
    { args: ['--bus', 'remediation', '--cluster', 'c', '--target', 'etcd-1', '--reason', ' '], names: '--reason: must not be empty' },
  ])('$names: exit 2, one line, nothing sent', async ({ args, names }) => {
    const before = sent().length;
    const run = await runCli(['send', ...args], { env });
    expect(run.code).toBe(2);
    expect(run.stderr.trimEnd().split('\n')).toEqual([expect.stringContaining(names)]);
    expect(sent()).toHaveLength(before);
  });

  it('no region anywhere: exit 2 naming --region', async () => {
    const { AWS_REGION: _, ...noRegion } = env;
    const run = await runCli(['send', '--bus', 'remediation', '--cluster', 'c', '--target', 'etcd-1'], {
      env: { ...noRegion, AWS_REGION: '', AWS_DEFAULT_REGION: '', AWS_CONFIG_FILE: '/nonexistent', AWS_PROFILE: '' },
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe('etcd-remediator: --region is required: no region in AWS_REGION or the AWS config\n');
  });

  it('--help prints its usage and exits 0', async () => {
    const run = await runCli(['send', '--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^usage: etcd-remediator send --bus NAME --cluster ID --target/);
  });
});
