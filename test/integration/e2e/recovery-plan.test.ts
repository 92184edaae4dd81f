// When quorum is lost, `plan` prints a recovery plan and never runs it; here a test follows it on a
// real 3-member cluster with 2 members stopped. The commands it prints run as printed, in one
// folder that stands for every member's host (etcdctl from $ETCDCTL_BIN; etcdutl from
// $ETCDUTL_BIN, or etcdctl where the etcd build ships none: 3.5's etcdctl still restores); the
// steps that edit a member's deployment (stop it, start it on its restored data) are done to the
// lab's processes as the step says. The cluster ends whole, with the survivor's data on every member.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { Etcd3 } from 'etcd3';
import type { RecoveryPlan } from '../../../functions/core/recovery/index.ts';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { startLab, type Lab } from '../../../infra/lab/lab.ts';
import { jsonOf, runCli } from '../cli/support.ts';

const run = promisify(execFile);
const TOOLS: Record<string, string> = {
  etcdctl: process.env.ETCDCTL_BIN ?? 'etcdctl',
  etcdutl: process.env.ETCDUTL_BIN ?? process.env.ETCDCTL_BIN ?? 'etcdctl',
};

let lab: Lab | undefined;
let host: string | undefined;
afterEach(async () => {
  await lab?.down();
  lab = undefined;
  if (host) rmSync(host, { recursive: true, force: true });
  host = undefined;
});

/** A printed command, run as printed in the hosts' folder: its words split on spaces (the plan quotes none here). */
async function runPrinted(command: string): Promise<string> {
  const [tool, ...args] = command.split(' ');
  const binary = TOOLS[tool!];
  if (!binary) throw new Error(`a printed command this test cannot run: ${command}`);
  const { stdout } = await run(binary, args, { timeout: 20_000, cwd: host });
  return stdout;
}

describe('the recovery plan of a cluster that lost quorum, followed', () => {
  it('2 of 3 members stopped: plan names the survivor and every step; followed (a snapshot of the survivor restored on every member), the cluster is whole with the survivor data', async () => {
    lab = await startLab({ members: 3, electionTimeoutMs: 500 });
    const client = new Etcd3({ hosts: lab.endpoints() });
    try {
      await client.put('/recovery/kept').value('before the loss');
    } finally {
      client.close();
    }
    const [survivorName, ...lostNames] = lab.members.map((m) => m.name);
    // A write is committed once a quorum holds it: the member that survives may not have it yet. The
    // survivor's data is what a recovery keeps, so the test waits until the survivor applied it.
    const survivorUrl = lab.member(survivorName!).directUrl;
    await waitFor(
      async () => {
        const { stdout } = await run(TOOLS.etcdctl!, ['--endpoints', survivorUrl, 'get', '/recovery/kept', '--print-value-only', '--consistency=s']);
        return stdout.trim() === 'before the loss' || undefined;
      },
      { timeoutMs: 10_000, what: `${survivorName} to apply the write` },
    );
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
      new RegExp(`recover the cluster from a snapshot of ${survivorName}, the member that answers with the most recent data .*restored on every member`),
    );
    const { recovery } = result.evidence;
    expect(recovery.survivor?.name).toBe(survivorName);
    expect(recovery.summary).toMatch(/nothing runs them for you/);
    // The text form says the same steps, for a person.
    const text = await runCli(['plan', '--endpoints', lab.endpoints().join(','), '--target', lostNames[0]!, '--election-timeout', '500ms', '--timeout', '1s']);
    expect(text.stdout).toMatch(/recovery plan \(quorum is lost; follow it by hand, nothing here runs it\)/);
    for (const step of recovery.steps) expect(text.stdout).toContain(step.what);

    host = mkdtempSync(path.join(tmpdir(), 'recovery-host-'));
    const restored: string[] = [];
    for (const step of recovery.steps) {
      if (/^Save a snapshot of/.test(step.what)) for (const command of step.commands) await runPrinted(command.run);
      else if (/^Stop etcd on every member still running/.test(step.what)) await lab.kill(survivorName!);
      else if (/^Restore recovery\.db on every member/.test(step.what)) {
        for (const command of step.commands) {
          expect(command.on).not.toBe('anywhere');
          await runPrinted(command.run);
          restored.push(/--name (\S+)/.exec(command.run)![1]!);
        }
      } else if (/^Start every member on its restored data/.test(step.what)) {
        for (const name of restored) await lab.restartWith(name, [], { dataDir: path.join(host, `${name}.restored`), waitForLeader: false });
      } else if (/^Check that the 3 members are started/.test(step.what)) {
        const whole = lab;
        await waitFor(async () => ((await whole.status(survivorName!).catch(() => undefined))?.leaderId ?? '0') !== '0' || undefined, {
          timeoutMs: 20_000,
          what: 'the restored members to elect a leader',
        });
        const [status, members] = [await runPrinted(step.commands[0]!.run), await runPrinted(step.commands[1]!.run)];
        expect(status.match(/\btrue\b/g)).toHaveLength(1); // one IS LEADER of three
        expect(
          members
            .trim()
            .split('\n')
            .filter((l) => /\|\s*started\s*\|/.test(l)),
        ).toHaveLength(3);
      } else throw new Error(`a step this test does not know how to follow: ${step.what}`);
    }
    expect(restored.sort()).toEqual(lab.members.map((m) => m.name).sort());

    // Whole again: three voting members, and the survivor's data on each.
    const list = await lab.memberList(2_000);
    expect(list.map((m) => m.name).sort()).toEqual(lab.members.map((m) => m.name).sort());
    for (const member of lab.members) {
      const { stdout } = await run(TOOLS.etcdctl!, ['--endpoints', member.directUrl, 'get', '/recovery/kept', '--print-value-only']);
      expect(stdout.trim(), member.name).toBe('before the loss');
    }
  }, 120_000);
});
