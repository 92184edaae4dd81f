// --election-timeout below 100 ms is refused at every edge that reads it: the CLI flag and the run
// config, each with one message naming what the user wrote.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { clusterFromFlags } from '../../../infra/cli/cluster-flags.ts';
import { UsageError } from '../../../infra/cli/args.ts';
import { ConfigError, loadConfig } from '../../../infra/cli/config.ts';

const endpoints = 'http://127.0.0.1:2379';

describe('--election-timeout on the command line', () => {
  it.each(['0s', '0', '50ms', '99ms'])('refuses %s, naming the flag', (value) => {
    const run = () => clusterFromFlags({ endpoints, 'election-timeout': value });
    expect(run).toThrow(UsageError);
    expect(run).toThrow(/^--election-timeout: must be at least 100ms/);
  });

  it.each([
    ['100ms', 100],
    ['500ms', 500],
    ['1s', 1_000],
  ])('accepts %s', (value, ms) => {
    expect(clusterFromFlags({ endpoints, 'election-timeout': value }).policy.electionTimeoutMs).toBe(ms);
  });
});

describe('electionTimeout in the run config', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'election-timeout-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  const configWith = (policy: Record<string, unknown>): string => {
    const file = path.join(dir, `config-${Object.keys(policy).join('-')}-${String(Object.values(policy)[0])}.json`);
    fs.writeFileSync(file, JSON.stringify({ state: 's.sqlite', clusters: [{ clusterId: 'a', endpoints: [endpoints], policy }] }));
    return file;
  };

  it.each([
    [{ electionTimeout: '50ms' }, 'clusters[0].policy.electionTimeout: must be at least 100ms'],
    [{ electionTimeout: '0s' }, 'clusters[0].policy.electionTimeout: must be at least 100ms'],
    [{ electionTimeoutMs: 20 }, 'clusters[0].policy.electionTimeoutMs: must be at least 100ms'],
  ])('refuses %j, naming the field', (policy, says) => {
    const file = configWith(policy);
    expect(() => loadConfig(file)).toThrow(ConfigError);
    expect(() => loadConfig(file)).toThrow(says);
  });

  it('accepts 100ms', () => {
    expect(loadConfig(configWith({ electionTimeout: '100ms' })).clusters[0]!.policy.electionTimeoutMs).toBe(100);
  });
});
