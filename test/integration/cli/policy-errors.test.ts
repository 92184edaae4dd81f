// A policy value the policy refuses, in run's config or a --policy file, is exit 2 and one line
// naming the field as written and the problem in plain words, never zod's raw error.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { limitedRunCli } from './support.ts';

// Each case is a Node process of its own that reads a file and exits: they run side by side, a
// couple of processes at a time.
const runCli = limitedRunCli();

const GUARD_PREFIX = 'must be a key prefix such as /etcd-remediator';

describe.concurrent('bad policy values name the field', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-policy-errors-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  const write = (name: string, body: object): string => {
    const file = path.join(dir, `${name}.json`);
    fs.writeFileSync(file, JSON.stringify(body));
    return file;
  };
  const runConfig = (name: string, policy: object) =>
    write(name, {
      state: `${name}.sqlite`,
      listen: '127.0.0.1:0',
      insecureNoAuth: true,
      clusters: [{ clusterId: 'lab', endpoints: ['http://127.0.0.1:1'], policy }],
    });

  const expectOneLine = async (args: string[], says: string) => {
    const run = await runCli(args, { timeoutMs: 15_000 });
    expect(run.code, run.stderr).toBe(2);
    const lines = run.stderr.trimEnd().split('\n');
    expect(lines, run.stderr).toHaveLength(1);
    expect(lines[0]).not.toMatch(/^etcd-remediator: \[/);
    expect(lines[0]).toContain(says);
  };

  it.each([
    { name: 'lock-lease', policy: { lockLease: '0s' }, says: 'clusters[0].policy.lockLease: must be positive' },
    { name: 'lock-lease-ms', policy: { lockLeaseMs: 0 }, says: 'clusters[0].policy.lockLeaseMs: must be positive' },
    { name: 'snapshot-timeout', policy: { snapshotTimeout: '0s' }, says: 'clusters[0].policy.snapshotTimeout: must be positive' },
    { name: 'actuator-timeout', policy: { actuatorTimeoutMs: 0 }, says: 'clusters[0].policy.actuatorTimeoutMs: must be positive' },
    { name: 'guard-prefix', policy: { guardPrefix: '' }, says: `clusters[0].policy.guardPrefix: ${GUARD_PREFIX}` },
    { name: 'guard-prefix-slash', policy: { guardPrefix: '/etcd-remediator/' }, says: `clusters[0].policy.guardPrefix: ${GUARD_PREFIX}` },
    { name: 'max-attempts', policy: { maxAttempts: 0 }, says: 'clusters[0].policy.maxAttempts: must be positive' },
    { name: 'typo', policy: { graec: '60s' }, says: 'clusters[0].policy.graec: is not a known field' },
    { name: 'backoff-typo', policy: { backoff: { bse: '5s' } }, says: 'clusters[0].policy.backoff.bse: is not a known field' },
  ])('run --config: $says', ({ name, policy, says }) => expectOneLine(['run', '--config', runConfig(name, policy)], says));

  it('run --config: every wrong field in one line', () =>
    expectOneLine(
      ['run', '--config', runConfig('two', { lockLease: '0s', guardPrefix: '' })],
      `clusters[0].policy.lockLease: must be positive; clusters[0].policy.guardPrefix: ${GUARD_PREFIX}`,
    ));

  it.each([
    { name: 'p-lock-lease', policy: { lockLease: '0s' }, says: 'lockLease: must be positive' },
    { name: 'p-guard-prefix', policy: { guardPrefix: '' }, says: `guardPrefix: ${GUARD_PREFIX}` },
    { name: 'p-backoff', policy: { backoff: { base: '1s', capMs: 1.5 } }, says: 'backoff.capMs: ' },
    { name: 'p-typo', policy: { graec: '60s' }, says: 'graec: is not a known field' },
    { name: 'p-backoff-typo', policy: { backoff: { bse: '5s' } }, says: 'backoff.bse: is not a known field' },
  ])('register --policy: $says', ({ name, policy, says }) => {
    const file = write(name, policy);
    return expectOneLine(
      ['register', '--table', 't', '--cluster', 'prod', '--endpoints', 'http://127.0.0.1:2379', '--policy', file, '--dry-run'],
      `--policy ${file}: ${says}`,
    );
  });
});
