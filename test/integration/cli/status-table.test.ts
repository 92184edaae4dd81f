// `status` without an incident id, through the real binary, on the state file of a real removal:
// remediate takes a follower out of a lab, and the table shows its incident awaiting the
// replacement, with the check the scheduler keeps due next; --json says the same in fields.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLab, type Lab } from '../../../infra/lab/lab.ts';
import { jsonOf, runCli } from './support.ts';

describe('status table on a real removal', () => {
  let lab: Lab;
  let dir: string;
  beforeAll(async () => {
    lab = await startLab({ members: 3, electionTimeoutMs: 500 });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-status-table-'));
  });
  afterAll(async () => {
    await lab?.down();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('shows the removed follower awaiting its replacement, its check due next, and --json the same', async () => {
    const leader = await lab.leader();
    const follower = lab.members.find((m) => m.name !== leader.name)!;
    const state = path.join(dir, 'state.sqlite');
    // etcd refuses reconfiguration for a few seconds after start: a short backoff retries it promptly.
    const lab500 = ['--election-timeout', '500ms', '--timeout', '1s', '--backoff', '300ms'];
    const removed = await runCli(['remediate', '--endpoints', lab.endpoints().join(','), '--target', follower.name, ...lab500, '--state', state, '--json'], {
      timeoutMs: 30_000,
    });
    expect(removed.code, removed.stderr).toBe(6);
    const { incidentId, reason } = jsonOf<{ incidentId: string; reason: string }>(removed);

    const status = await runCli(['status', '--state', state]);
    expect(status.code, status.stderr).toBe(0);
    const lines = status.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^ID {8}CLUSTER {2}TARGET +STATE +REASON +AGE +NEXT +ATTEMPT$/);
    const cells = lines[1]!.split(/ {2,}/);
    // The first check of the replacement is the scheduler's timer in the file: due within its 15 s.
    expect(cells).toEqual([
      incidentId.slice(0, 8),
      'default',
      follower.name,
      'awaiting-replacement',
      reason,
      expect.stringMatching(/^\d+s$/),
      expect.stringMatching(/^in \d+s$/),
      expect.stringMatching(/^\d+$/),
    ]);
    // Off a terminal nothing is cut.
    expect(status.stdout).not.toContain('…');

    const json = jsonOf<{ incidents: { incidentId: string; state: string; nextDueAt: string | null; replacementSaid: string | null }[] }>(
      await runCli(['status', '--state', state, '--json']),
    );
    expect(json.incidents).toEqual([expect.objectContaining({ incidentId, state: 'awaiting-replacement', replacementSaid: null })]);
    const dueIn = Date.parse(json.incidents[0]!.nextDueAt ?? '') - Date.now();
    expect(dueIn).toBeGreaterThan(0);
    expect(dueIn).toBeLessThanOrEqual(15_000);
  });
});
