// bench:fleet part A at a tiny size, so the benchmark cannot rot: the real script, its lines read
// as a script reads them, every incident ended, the mix and the history cost said.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parseFleetLine } from './fleet-pipeline.ts';

const run = promisify(execFile);
const BENCH = fileURLToPath(new URL('./fleet.bench.ts', import.meta.url));

describe('bench:fleet part A, tiny', () => {
  it('ends every incident of 20 over 5 clusters and prints lines a script can read', async () => {
    // Exit 1 is the goal missed: at this size the rate is bound by the waits, not by the pipeline.
    const { stdout } = await run(process.execPath, [BENCH, '--part', 'A', '--clusters', '5', '--incidents', '20', '--history', '50'], {
      timeout: 50_000,
    }).catch((error: { stdout?: string; code?: number }) => {
      if (error.code !== 1 || !error.stdout) throw error;
      return { stdout: error.stdout };
    });
    const lines = stdout.trim().split('\n').map(parseFleetLine);
    const a = lines.find((l) => l?.part === 'A' && l.incidents !== undefined);
    expect(a, stdout).toMatchObject({ incidents: '20', clusters: '5', ended: '20', leader_cut: '16', follower_sick: '4' });
    for (const key of ['per_min', 'p50_ms', 'p99_ms', 'elapsed_ms']) expect(Number(a![key]), key).toBeGreaterThan(0);
    expect(Number(a!.p99_ms)).toBeGreaterThanOrEqual(Number(a!.p50_ms));
    // Done means replaced: each ends completed once its replacement is seen.
    expect(lines.find((l) => l?.endings !== undefined)?.endings).toBe('RemediationReplaced:20');
    const history = lines.find((l) => l?.part === 'A-history');
    expect(history, stdout).toMatchObject({ reports: '20', history: '50' });
    expect(Number(history!.ratio)).toBeGreaterThan(0);
  });
});
