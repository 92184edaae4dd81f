// Every file a flag or config field names is read with a bound: a device, a FIFO or a directory is
// refused as not a regular file, and a file over 1 MiB as too large, at once (exit 2, one line
// naming the flag or field), where reading it whole would block for ever or fill memory.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCerts, type CertSet } from '../adapters/single-etcd.ts';
import { runCli } from './support.ts';

const ENDPOINT = ['--endpoints', 'http://127.0.0.1:1', '--timeout', '200ms'];
/** Refusals are immediate; a run still going after this read a file it should have refused. */
const REFUSED_WITHIN_MS = 10_000;

interface Case {
  name: string;
  args: () => string[];
  says: () => string;
}

describe('input files: regular files of bounded size only', () => {
  let dir: string;
  let certs: CertSet;
  /** A FIFO nobody writes: reading it blocks for ever. */
  let fifo: string;
  /** A regular file one byte over the limit. */
  let large: string;
  let kubeconfig: string;
  const config = (name: string, body: object): string => {
    const file = path.join(dir, `${name}.json`);
    fs.writeFileSync(file, JSON.stringify({ state: `${name}.sqlite`, listen: '127.0.0.1:0', insecureNoAuth: true, ...body }));
    return file;
  };
  const cluster = (extra: object) => ({ clusters: [{ clusterId: 'lab', endpoints: ['http://127.0.0.1:1'], ...extra }] });

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-input-files-'));
    certs = await makeCerts(dir, 'lab');
    fifo = path.join(dir, 'fifo');
    execFileSync('mkfifo', ['-m', '600', fifo]);
    large = path.join(dir, 'large.pem');
    const header = '-----BEGIN CERTIFICATE-----\n';
    fs.writeFileSync(large, header + 'A'.repeat((1 << 20) + 1 - header.length));
    expect(fs.statSync(large).size).toBe((1 << 20) + 1);
    kubeconfig = path.join(dir, 'kubeconfig');
    fs.writeFileSync(kubeconfig, 'apiVersion: v1\nkind: Config\n');
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  const tls = (cacert: string, cert = certs.certFile, key = certs.keyFile) => ['--cacert', cacert, '--cert', cert, '--key', key];
  const cases: Case[] = [
    { name: 'a FIFO as --cacert', args: () => ['probe', ...ENDPOINT, ...tls(fifo)], says: () => `--cacert ${fifo}: not a regular file (a FIFO)` },
    { name: 'a FIFO as --cert', args: () => ['probe', ...ENDPOINT, ...tls(certs.caFile, fifo)], says: () => `--cert ${fifo}: not a regular file (a FIFO)` },
    {
      name: 'a FIFO as --key',
      args: () => ['probe', ...ENDPOINT, ...tls(certs.caFile, certs.certFile, fifo)],
      says: () => `--key ${fifo}: not a regular file (a FIFO)`,
    },
    { name: 'a FIFO as --kubeconfig', args: () => ['probe', '--kubeconfig', fifo], says: () => `--kubeconfig: ${fifo}: not a regular file (a FIFO)` },
    {
      name: 'a FIFO as --workload-kubeconfig',
      args: () => ['probe', '--kubeconfig', kubeconfig, '--cluster', 'wl', '--workload-kubeconfig', fifo],
      says: () => `--workload-kubeconfig: ${fifo}: not a regular file (a FIFO)`,
    },
    { name: 'a FIFO as run --config', args: () => ['run', '--config', fifo], says: () => `${fifo}: not a regular file (a FIFO)` },
    {
      name: "a FIFO as tls.cacert in run's config",
      args: () => ['run', '--config', config('tls-fifo', cluster({ tls: { cacert: fifo } }))],
      says: () => `clusters[0].tls.cacert ${fifo}: not a regular file (a FIFO)`,
    },
    {
      name: "a FIFO as kubeconfig in run's config",
      args: () => ['run', '--config', config('kube-fifo', { clusters: [{ clusterId: 'lab', kubeconfig: fifo }] })],
      says: () => `clusters[0].kubeconfig (cluster lab): ${fifo}: not a regular file (a FIFO)`,
    },
    {
      name: "a FIFO as tokenFile in run's config",
      args: () => ['run', '--config', config('token-fifo', { ...cluster({}), insecureNoAuth: undefined, tokenFile: fifo })],
      says: () => `tokenFile ${fifo}: not a regular file (a FIFO)`,
    },
    {
      name: 'a FIFO as register --policy',
      args: () => ['register', '--table', 't', '--cluster', 'prod', ...ENDPOINT.slice(0, 2), '--policy', fifo, '--dry-run'],
      says: () => `--policy ${fifo}: not a regular file (a FIFO)`,
    },
    {
      name: 'a FIFO as watch --kubeconfig',
      args: () => ['watch', '--kubeconfig', fifo, '--state', path.join(dir, 'watch.sqlite')],
      says: () => `--kubeconfig: cannot use ${fifo}: not a regular file (a FIFO)`,
    },
    {
      name: 'a large file as --cacert',
      args: () => ['probe', ...ENDPOINT, ...tls(large)],
      says: () => `--cacert ${large}: is 1048577 bytes, over the limit of 1 MiB`,
    },
    {
      name: 'a large file as --kubeconfig',
      args: () => ['probe', '--kubeconfig', large],
      says: () => `--kubeconfig: ${large}: is 1048577 bytes, over the limit of 1 MiB`,
    },
    { name: 'a large file as run --config', args: () => ['run', '--config', large], says: () => `${large}: is 1048577 bytes, over the limit of 1 MiB` },
    { name: 'a directory as --cacert', args: () => ['probe', ...ENDPOINT, ...tls(dir)], says: () => `--cacert ${dir}: not a regular file (a directory)` },
    {
      name: 'a directory as register --policy',
      args: () => ['register', '--table', 't', '--cluster', 'prod', ...ENDPOINT.slice(0, 2), '--policy', dir, '--dry-run'],
      says: () => `--policy ${dir}: not a regular file (a directory)`,
    },
    {
      name: 'the device /dev/zero as --cacert',
      args: () => ['probe', ...ENDPOINT, ...tls('/dev/zero')],
      says: () => '--cacert /dev/zero: not a regular file (a character device)',
    },
    {
      name: 'the device /dev/zero as --key',
      args: () => ['probe', ...ENDPOINT, ...tls(certs.caFile, certs.certFile, '/dev/zero')],
      says: () => '--key /dev/zero: not a regular file (a character device)',
    },
    {
      name: 'the device /dev/zero as --kubeconfig',
      args: () => ['probe', '--kubeconfig', '/dev/zero'],
      says: () => '--kubeconfig: /dev/zero: not a regular file (a character device)',
    },
    {
      name: 'the device /dev/zero as run --config',
      args: () => ['run', '--config', '/dev/zero'],
      says: () => '/dev/zero: not a regular file (a character device)',
    },
    {
      name: 'the device /dev/zero as register --policy',
      args: () => ['register', '--table', 't', '--cluster', 'prod', ...ENDPOINT.slice(0, 2), '--policy', '/dev/zero', '--dry-run'],
      says: () => '--policy /dev/zero: not a regular file (a character device)',
    },
  ];

  it.each(cases)('$name: exit 2, one line naming it', async ({ args, says }) => {
    const run = await runCli(args(), { timeoutMs: REFUSED_WITHIN_MS });
    expect(run.code, run.stderr).toBe(2);
    const lines = run.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    // A config's problems follow the config's own path.
    expect(lines[0]).toMatch(/^etcd-remediator: /);
    expect(lines[0]!.endsWith(`: ${says()}`), lines[0]).toBe(true);
  });
});
