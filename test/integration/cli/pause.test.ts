// `pause` and `resume` through the real binary: on a local state file (read back by status and by
// the store the pipeline uses) and on a deployed stack's table (dynalite); bad input is one line
// naming the flag, exit 2.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDynamoIncidentStore } from '../../../functions/adapters/aws/dynamodb-store.ts';
import { openSqliteStore } from '../../../functions/adapters/local/sqlite-store.ts';
import { startDynalite, type Dynalite } from '../../support/dynalite.ts';
import { limitedRunCli, jsonOf } from './support.ts';

// Every command is a Node process that loads the whole CLI: the cases run side by side, and so do
// the commands of a case that do not depend on each other's writes (the state file's busy timeout
// lets two writers take turns); a couple of processes at a time.
const runCli = limitedRunCli();

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'pause-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const pausesIn = async (file: string) => {
  const store = openSqliteStore({ path: file });
  try {
    return await store.fleetPauses();
  } finally {
    await store.close();
  }
};

describe.concurrent('pause and resume on a state file', () => {
  it('pauses the fleet and a cluster, status shows both, resume lifts each', async () => {
    const state = join(dir, 'a.sqlite');
    // The state file of a run: pause writes into it, never makes one.
    await openSqliteStore({ path: state }).close();
    const [fleet, one] = await Promise.all([
      runCli(['pause', '--state', state, '--why', 'zone b unreachable', '--by', 'ops@box']),
      runCli(['pause', '--state', state, '--cluster', 'prod', '--why', 'upgrade', '--json']),
    ]);
    expect(fleet.code, fleet.stderr).toBe(0);
    expect(fleet.stdout).toMatch(/^paused the fleet in state file .* by ops@box at .*: zone b unreachable\n$/);
    expect(one.code, one.stderr).toBe(0);
    // Who defaults to $USER@hostname.
    expect(jsonOf<{ by: string; paused: string }>(one)).toMatchObject({ paused: 'prod', by: expect.stringMatching(/.+@.+/) });
    expect(await pausesIn(state)).toMatchObject({ fleet: { by: 'ops@box', why: 'zone b unreachable' }, clusters: { prod: { why: 'upgrade' } } });

    const status = await runCli(['status', '--state', state]);
    expect(status.stdout).toMatch(
      /^paused fleet-wide by ops@box since .*: zone b unreachable \(etcd-remediator resume\)\ncluster prod paused by .* since .*: upgrade \(etcd-remediator resume --cluster prod\)\nno incidents\n$/,
    );

    // The fleet's pause and the cluster's are records of their own: lifted side by side.
    const [resumed, resumedProd] = await Promise.all([runCli(['resume', '--state', state]), runCli(['resume', '--state', state, '--cluster', 'prod'])]);
    expect(resumed.stdout).toMatch(/^resumed the fleet in state file/);
    expect(resumedProd.code).toBe(0);
    expect((await runCli(['resume', '--state', state])).stdout).toMatch(/^the fleet was not paused/);
    expect(await pausesIn(state)).toEqual({});
    const storm = await runCli(['resume', '--state', state, '--storm', '--why', 'the failures are real', '--by', 'sre']);
    expect(storm.stdout).toMatch(/^storm ended in state file .* by sre at /);
    expect(await pausesIn(state)).toMatchObject({ stormEnded: { by: 'sre', why: 'the failures are real' } });
  });

  it.each([
    [['pause', '--state', 'x.sqlite'], /^etcd-remediator: --why is required/],
    [['pause', '--state', 'x.sqlite', '--why', ' '], /--why is required/],
    [['pause', '--why', 'w'], /--state FILE or --table NAME is required/],
    [
      ['pause', '--state', 'typo.sqlite', '--why', 'w'],
      /^etcd-remediator: --state: no state file at typo.sqlite \(give the state file of run or remediate\)$/m,
    ],
    [['pause', '--state', 'x.sqlite', '--table', 't', '--why', 'w'], /--state and --table: give one/],
    [['pause', '--state', 'x.sqlite', '--why', 'a\u001bb'], /--why: must be one line of text/],
    [['resume', '--state', 'x.sqlite', '--storm', '--cluster', 'c'], /--storm and --cluster/],
    [['resume', '--state', 'x.sqlite', '--region', 'eu-west-1'], /--region goes with --table/],
  ])('%j is refused in one line naming the flag, exit 2', async (args, says) => {
    const run = await runCli(args, { cwd: dir });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(says);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
  });
});

describe.concurrent('pause and resume on a deployed stack’s table', () => {
  let dynamo: Dynalite;
  beforeAll(async () => {
    dynamo = await startDynalite();
  });
  afterAll(async () => dynamo?.close());

  it('writes the pause the functions read, and lifts it', async () => {
    const table = await dynamo.createTable();
    const env = { AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint, AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' };
    const store = createDynamoIncidentStore({ client: dynamo.client(), tableName: table });
    const paused = await runCli(['pause', '--table', table, '--region', 'us-east-1', '--cluster', 'prod', '--why', 'maintenance'], { env });
    expect(paused.code, paused.stderr).toBe(0);
    expect(await store.fleetPauses()).toMatchObject({ clusters: { prod: { why: 'maintenance' } } });
    const resumed = await runCli(['resume', '--table', table, '--region', 'us-east-1', '--cluster', 'prod'], { env });
    expect(resumed.stdout).toMatch(/^resumed cluster prod in table /);
    expect(await store.fleetPauses()).toEqual({});
  });
});
