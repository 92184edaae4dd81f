// run with its state file on a real disk that fills up mid-incident (a small tmpfs): the leader is
// cut, and the disk fills while the grace window runs. The service must not spin: it says once
// that the state file cannot be written, tries again every few seconds (its stderr and CPU stay
// small, its retries keep to the back-off), removes nothing it could not journal, and once space
// is back the incident goes on to remove the leader.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { startLab, type Lab } from '../../../infra/lab/lab.ts';
import { fullDiskUnavailable, smallDisk, type SmallDisk } from '../../support/full-disk.ts';
import { killService, startCli, type Service } from './support.ts';

const title = fullDiskUnavailable
  ? `run with its state file on a disk that fills up (skipped: ${fullDiskUnavailable})`
  : 'run with its state file on a disk that fills up';
/** How often the runtime tries a state file that refuses writes again. */
const STORE_RETRY_MS = 5_000;
/**
 * The policy's grace window. The disk fills within it (just after the leader is first seen
 * unreachable), so it needs only room for the test to see that line and fill the disk.
 */
const GRACE_MS = 4_000;
/** The one line that says the state file refuses writes. */
const NOTICE = /state file \S+: cannot write: disk full \(SQLITE_FULL\); retrying every 5s[^\n]*\n/;
const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

/** CPU time (user + system) a process has used, from /proc. */
function cpuMs(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of proc(5); fields[0] here is field 3.
  return ((Number(fields[11]) + Number(fields[12])) * 1_000) / TICKS_PER_SECOND;
}

const count = (text: string, pattern: RegExp): number => text.match(new RegExp(pattern.source, 'g'))?.length ?? 0;

describe.skipIf(fullDiskUnavailable !== undefined)(title, () => {
  let lab: Lab;
  let disk: SmallDisk;
  let dir: string;
  let service: Service | undefined;
  beforeAll(async () => {
    lab = await startLab({ members: 3, electionTimeoutMs: 500 });
    disk = smallDisk();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-run-full-disk-'));
  });
  afterAll(async () => {
    await killService(service);
    await lab?.down();
    disk?.remove();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('backs off and says so once while the disk is full, then removes the cut leader once space is back', async () => {
    const leader = await lab.leader();
    await lab.fault(leader.name, 'cut');
    const state = path.join(disk.dir, 'state.sqlite');
    const config = path.join(dir, 'config.json');
    const policy = { electionTimeout: '500ms', callTimeout: '1s', grace: `${GRACE_MS}ms`, backoff: { base: '300ms', cap: '2s' } };
    // No token: events on stdin only.
    fs.writeFileSync(config, JSON.stringify({ state, listen: '127.0.0.1:0', clusters: [{ clusterId: 'lab', endpoints: lab.endpoints(), policy }] }));
    service = startCli(['run', '--config', config]);
    const running = service;
    await running.waitForStderr(/listening on stdin only/);
    const event = { clusterId: 'lab', target: { memberName: leader.name }, reason: 'kubelet gone', source: 'test', observedAt: new Date().toISOString() };
    running.child.stdin!.write(`${JSON.stringify(event)}\n`);
    const [, incidentId] = await running.waitForStderr(/stdin line 1: accepted, incident (\S+)/);
    // In the grace window: the followers still name the cut leader, and it waits.
    await running.waitForStderr(/LEADER_UNREACHABLE/, 20_000);

    disk.fill();
    const filledAt = Date.now();
    const pid = running.child.pid!;
    const cpuAtFill = cpuMs(pid);
    const stderrAtFill = running.stderr().length;
    // The first write refused is said at once; the state file is tried again every 5 s from then.
    await running.waitForStderr(NOTICE, 10_000);
    const noticedAt = Date.now();
    // The outage outlasts the grace window: without its journal, the leader must not be removed
    // meanwhile. It lasts past the grace window by more than one retry (the first retry comes after
    // the grace window has ended, and must still not remove), and ends a little before the second
    // retry, which finds the space back.
    const freeAt = noticedAt + 2 * STORE_RETRY_MS - 1_000;
    await waitFor(async () => (Date.now() >= freeAt ? true : undefined), {
      timeoutMs: 2 * STORE_RETRY_MS + 5_000,
      what: 'the outage to outlast the grace window',
    });
    const outageMs = Date.now() - filledAt;
    expect(outageMs).toBeGreaterThanOrEqual(GRACE_MS + STORE_RETRY_MS);
    const outage = running.stderr().slice(stderrAtFill);
    const cpu = cpuMs(pid) - cpuAtFill;

    expect(outage.length, `stderr during ${outageMs} ms of outage:\n${outage.slice(0, 4_000)}`).toBeLessThan(2_048);
    expect(cpu, `CPU ms over ${outageMs} ms of outage`).toBeLessThan(outageMs * 0.25);
    expect(count(outage, NOTICE), outage).toBe(1);
    // Each retry fires the incident's timer again, and progress shows each RetryDue.
    expect(count(outage, /RetryDue/)).toBeLessThanOrEqual(Math.ceil(outageMs / STORE_RETRY_MS) + 2);
    expect((await lab.memberList()).map((m) => m.name)).toContain(leader.name);
    expect(running.stdout()).toBe('');

    disk.free();
    const line = await running.until(
      () =>
        running
          .stdout()
          .split('\n')
          .find((l) => l.includes(incidentId!)),
      `the outcome of incident ${incidentId} once space is back`,
      60_000,
    );
    expect(JSON.parse(line)).toMatchObject({ incidentId, outcome: 'awaiting-replacement', target: { name: leader.name } });
    expect(count(running.stderr(), /state file takes writes again after \d+s; open incidents go on\n/)).toBe(1);
    expect((await lab.memberList()).map((m) => m.name)).not.toContain(leader.name);

    running.child.kill('SIGTERM');
    expect(await running.exited).toBe(0);
    // Its own waits add up to more than vitest's 60 s (the leader seen unreachable, the outage, the
    // removal once space is back): each fails first, with the service's stderr, on a loaded machine.
  }, 150_000);
});
