// The binary keeps V8's code cache for its modules in the user's own cache directory, and a cache
// directory that cannot be made turns the cache off without a word (it must never hang or fail).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from './support.ts';

const dirs: string[] = [];
const scratch = (): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'compile-cache-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => dirs.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

// The real environment without a compile cache of its own: the binary's choice is under test.
const env = (more: Record<string, string>): Record<string, string> => {
  const { NODE_COMPILE_CACHE: _ignored, ...rest } = process.env;
  return { ...(rest as Record<string, string>), ...more };
};

describe('the compile cache', () => {
  it('lives under XDG_CACHE_HOME, owner-only, and holds entries after a run', async () => {
    const cache = scratch();
    const run = await runCli(['status', '--help'], { env: env({ XDG_CACHE_HOME: cache }) });
    expect(run.code).toBe(0);
    const dir = path.join(cache, 'etcd-remediator', 'node-compile-cache');
    expect(fs.statSync(path.join(cache, 'etcd-remediator')).mode & 0o777).toBe(0o700);
    expect(fs.readdirSync(dir, { recursive: true }).length).toBeGreaterThan(0);
  });

  it.each([
    ['a cache home under /proc (a recursive mkdir there spins)', '/proc/etcd-remediator-none'],
    ['a cache home that is a file', '/etc/hostname'],
  ])('%s: the command runs without one and says nothing of it', async (_what, home) => {
    const run = await runCli(['status', '--help'], { env: env({ XDG_CACHE_HOME: home }), timeoutMs: 20_000 });
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout).toContain('status');
  });

  it('ignores a relative XDG_CACHE_HOME, as the XDG spec says', async () => {
    const cwd = scratch();
    const home = scratch();
    const run = await runCli(['status', '--help'], { cwd, env: env({ XDG_CACHE_HOME: 'relative', HOME: home }) });
    expect(run.code).toBe(0);
    expect(fs.existsSync(path.join(cwd, 'relative'))).toBe(false);
    expect(fs.existsSync(path.join(home, '.cache', 'etcd-remediator', 'node-compile-cache'))).toBe(true);
  });
});
