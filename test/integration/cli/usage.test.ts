// Bad input is exit code 2 and one line on stderr that names what was wrong.
import { describe, expect, it } from 'vitest';
import { runCli } from './support.ts';

const endpoints = ['--endpoints', 'http://127.0.0.1:2379'];

describe.concurrent('etcd-remediator usage errors', () => {
  it.each([
    { args: ['probe', ...endpoints, '--bogus'], names: '--bogus' },
    { args: ['plan', ...endpoints, '--target', 'etcd1', '--grace', '5x'], names: '--grace: "5x" is not a duration' },
    { args: ['remediate', ...endpoints, '--target', 'etcd1', '--timeout', '10'], names: '--timeout: "10" is not a duration' },
    { args: ['plan', ...endpoints], names: '--target is required' },
    { args: ['remediate', '--target', 'etcd1'], names: '--endpoints is required' },
    { args: ['probe', '--endpoints', 'etcd1:2379'], names: '--endpoints: "etcd1:2379"' },
    { args: ['frobnicate'], names: 'unknown command "frobnicate"' },
    { args: ['status'], names: '--state is required' },
  ])('$args.0 $names', async ({ args, names }) => {
    const run = await runCli(args);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    const lines = run.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^etcd-remediator: /);
    expect(lines[0]).toContain(names);
  });

  it('the bad-duration message reads as documented', async () => {
    const run = await runCli(['plan', ...endpoints, '--target', 'etcd1', '--grace', '5x']);
    expect(run.stderr).toBe('etcd-remediator: --grace: "5x" is not a duration: "x" is not a unit (use e.g. 500ms, 30s, 1h30m)\n');
  });

  it.each(['probe', 'plan', 'remediate', 'status', 'run', 'lab'])('%s --help prints its usage and exits 0', async (command) => {
    const run = await runCli([command, '--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^usage: etcd-remediator ${command}`));
  });
});
