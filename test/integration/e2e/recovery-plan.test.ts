// When quorum is lost, `plan` prints a recovery plan and never runs it; here a test follows it on a
// real 3-member cluster with 2 members stopped. The commands it prints run as printed (etcdctl
// from $ETCDCTL_BIN); the steps that edit a member's deployment (stop it, add or remove a flag,
// start it on an empty data directory) are done to the lab's processes as the step says. The
// cluster ends whole, with the survivor's data on every member.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { Etcd3 } from 'etcd3';
import type { RecoveryPlan } from '../../../functions/core/recovery/index.ts';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { startLab, type Lab } from '../../../infra/lab/lab.ts';
import { jsonOf, runCli } from '../cli/support.ts';

const run = promisify(execFile);
const ETCDCTL = process.env.ETCDCTL_BIN ?? 'etcdctl';

let lab: Lab | undefined;
afterEach(async () => {
  await lab?.down();
  lab = undefined;
});

/** A printed etcdctl command, run as printed: its words split on spaces (the plan quotes none here). */
async function runPrinted(command: string): Promise<string> {
  const [tool, ...args] = command.split(' ');
  expect(tool).toBe('etcdctl');
  const { stdout } = await run(ETCDCTL, args, { timeout: 10_000 });
  return stdout;
}

/** etcd refuses member add for a few seconds after a start ("unhealthy cluster"): the printed command is run again until it is taken. */
const retried = (command: string, what: string): Promise<string> =>
  waitFor(() => runPrinted(command).catch(() => undefined), { timeoutMs: 20_000, intervalMs: 500, what });

describe('the recovery plan of a cluster that lost quorum, followed', () => {
  it('2 of 3 members stopped: plan names the survivor and every step; followed, the cluster is whole with the survivor data', async () => {
    lab = await startLab({ members: 3, electionTimeoutMs: 500 });
    const client = new Etcd3({ hosts: lab.endpoints() });
    try {
      await client.put('/recovery/kept').value('before the loss');
    } finally {
      client.close();
    }
    const [survivorName, ...lostNames] = lab.members.map((m) => m.name);
    for (const name of lostNames) await lab.kill(name);
    // Until its election timeout passes, the survivor may still name a lost leader (which then counts as up).
    const alone = lab;
    await waitFor(async () => ((await alone.status(survivorName!).catch(() => undefined))?.leaderId === '0' ? true : undefined), {
      timeoutMs: 10_000,
      what: `${survivorName} to see no leader`,
    });

    const planned = await runCli([
      'plan',
      '--endpoints',
      lab.endpoints().join(','),
      '--target',
      lostNames[0]!,
      '--election-timeout',
      '500ms',
      '--timeout',
      '1s',
      '--json',
    ]);
    const result = jsonOf<{ reason: string; message: string; evidence: { recovery: RecoveryPlan } }>(planned);
    expect(result.reason, planned.stdout).toBe('NO_QUORUM');
    expect(result.message).toMatch(
      new RegExp(`recover the cluster from ${survivorName}, the member that answers with the most recent data .*--force-new-cluster`),
    );
    const { recovery } = result.evidence;
    expect(recovery.survivor?.name).toBe(survivorName);
    expect(recovery.summary).toMatch(/nothing runs them for you/);
    // The text form says the same steps, for a person.
    const text = await runCli(['plan', '--endpoints', lab.endpoints().join(','), '--target', lostNames[0]!, '--election-timeout', '500ms', '--timeout', '1s']);
    expect(text.stdout).toMatch(/recovery plan \(quorum is lost; follow it by hand, nothing here runs it\)/);
    for (const step of recovery.steps) expect(text.stdout).toContain(step.what);

    const added: string[] = [];
    for (const step of recovery.steps) {
      if (/^Stop etcd on every member still running/.test(step.what)) await lab.kill(survivorName!);
      else if (/^Keep a copy/.test(step.what)) continue; // the lab's data directory is thrown away at the end
      else if (/^Start \S+ once with --force-new-cluster/.test(step.what)) await lab.restartWith(survivorName!, ['--force-new-cluster']);
      else if (/^Remove --force-new-cluster/.test(step.what)) await lab.restartWith(survivorName!, []);
      else if (/^Check that/.test(step.what)) {
        const [status, members] = [await runPrinted(step.commands[0]!.run), await runPrinted(step.commands[1]!.run)];
        expect(status).toMatch(/true/); // IS LEADER
        expect(
          members
            .trim()
            .split('\n')
            .filter((l) => /started/.test(l)),
        ).toHaveLength(1);
      } else if (/^Add (\S+) back/.test(step.what)) {
        const name = /^Add (\S+) back/.exec(step.what)![1]!;
        const [add, list] = step.commands;
        expect(add!.on).toBe('anywhere');
        const printed = await retried(add!.run, `member add ${name} to be taken`);
        const initialCluster = /ETCD_INITIAL_CLUSTER="([^"]+)"/.exec(printed)?.[1];
        expect(initialCluster, printed).toBeDefined();
        await lab.rejoin(name, initialCluster!);
        expect(await runPrinted(list!.run)).toMatch(new RegExp(`\\|\\s*started\\s*\\|\\s*${name}\\s*\\|`));
        added.push(name);
      } else throw new Error(`a step this test does not know how to follow: ${step.what}`);
    }
    expect(added.sort()).toEqual([...lostNames].sort());

    // Whole again: three voting members, and the survivor's data on each.
    const list = await lab.memberList(2_000);
    expect(list.map((m) => m.name).sort()).toEqual(lab.members.map((m) => m.name).sort());
    for (const member of lab.members) {
      const { stdout } = await run(ETCDCTL, ['--endpoints', member.directUrl, 'get', '/recovery/kept', '--print-value-only']);
      expect(stdout.trim(), member.name).toBe('before the loss');
    }
  }, 120_000);
});
