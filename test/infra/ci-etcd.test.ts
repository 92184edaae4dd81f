// .ci/run runs the README's test command and its long scenarios, then the etcd-backed scenarios and the matrix on etcd
// 3.5 fetched by .ci/etcd-3.5, which fails (and with it .ci/run) when Debian cannot be reached:
// the 3.5 run is never skipped in silence.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
const hasApt = spawnSync('apt-get', ['--version']).status === 0;

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('.ci/run and etcd 3.5', () => {
  it("runs `npm test` (the README's test command), its long scenarios, then the 3.5 subset, and stops at the first failure", () => {
    const commands = read('.ci/run')
      .split('\n')
      .filter((line) => /^npm /.test(line));
    expect(commands).toEqual(['npm ci', 'npm test', 'npm run test:long', 'npm run test:etcd-3.5']);
    expect(read('.ci/run')).toMatch(/^set -euo pipefail$/m);
    expect(read('README.md')).toContain('npm ci && npm test ');
    expect(read('README.md')).toContain('npm run test:etcd-3.5');
    expect(read('README.md')).toContain('npm run test:long');
    // vitest.config.ts's three projects divide every test file between the two commands.
    expect(scripts['test:files']).toBe('vitest run --project shared --project isolated');
    // The checks run beside the test files, the linter at low priority: it takes the CPU the tests
    // leave. It type-checks too (TypeScript's own diagnostics), so no separate tsc runs.
    expect(scripts.test).toBe('run-p --print-label lint:low lint:layers format:check test:files');
    expect(scripts['lint:low']).toBe('nice -n 15 oxlint --type-aware --type-check --deny-warnings');
    // One file at a time: its scenarios judge what the machine gives them (a leader starved for real).
    expect(scripts['test:long']).toBe('vitest run --project long --no-file-parallelism');
  });

  it('the 3.5 subset runs through ETCD_BIN and ETCDCTL_BIN from .ci/etcd-3.5, and only once that succeeded', () => {
    const script = scripts['test:etcd-3.5']!;
    expect(script).toMatch(/^ETCD_35=\$\(\.ci\/etcd-3\.5\) && ETCD_BIN=\$ETCD_35\/bin\/etcd ETCDCTL_BIN=\$ETCD_35\/bin\/etcdctl vitest run /);
    const files = script.split(' vitest run ')[1]!.split(' ');
    for (const file of files) expect(fs.existsSync(path.join(ROOT, file)), file).toBe(true);
    expect(files).toContain('test/matrix/matrix.test.ts');
  });

  it.skipIf(!hasApt)('fails loudly, printing no folder, when the Debian mirror cannot be reached', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'etcd-35-'));
    try {
      const mirror = `http://127.0.0.1:${await closedPort()}/debian`;
      // apt retries a refused connection three times, 7 s of back-off that says nothing of the failure.
      const aptConfig = path.join(dir, 'apt.conf');
      fs.writeFileSync(aptConfig, 'Acquire::Retries "0";\n');
      const run = spawnSync(path.join(ROOT, '.ci/etcd-3.5'), {
        encoding: 'utf8',
        timeout: 60_000,
        env: { ...process.env, ETCD_35_DIR: dir, ETCD_35_MIRROR: mirror, APT_CONFIG: aptConfig },
      });
      expect(run.status, run.stderr).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain(`etcd 3.5: apt-get download etcd-server etcd-client from Debian trixie failed (is ${mirror} reachable?)`);
      expect(fs.existsSync(path.join(dir, 'trixie', 'bin', 'etcd'))).toBe(false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
