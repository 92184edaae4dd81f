// A run config cluster's metricsUrls: where each member serves /metrics, by member name or id,
// kept into the cluster entry the static directory hands out; anything but an absolute http or
// https URL refused, naming the cluster's field and the member.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createStaticDirectory } from '../../../functions/adapters/local/static-directory.ts';
import { ConfigError, loadConfig } from '../../../infra/cli/config.ts';

const endpoints = ['http://127.0.0.1:2379'];

describe("a run config cluster's metricsUrls", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'run-config-metrics-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  let n = 0;
  const configWith = (cluster: Record<string, unknown>): string => {
    const file = path.join(dir, `config-${(n += 1)}.json`);
    fs.writeFileSync(
      file,
      JSON.stringify({
        state: 's.sqlite',
        clusters: [
          { clusterId: 'prod', endpoints },
          { clusterId: 'other', endpoints, ...cluster },
        ],
      }),
    );
    return file;
  };

  it('reaches the cluster entry as given, by member name or id; a cluster without them has none', async () => {
    const metricsUrls = { 'etcd-1': 'http://127.0.0.1:2381', '8e9e05c52164694d': 'https://10.0.0.2:2381/metrics' };
    const directory = createStaticDirectory(loadConfig(configWith({ metricsUrls })).clusters);
    expect((await directory.get('other')).metricsUrls).toEqual(metricsUrls);
    expect((await directory.get('prod')).metricsUrls).toBeUndefined();
  });

  it.each([
    { what: 'a host:port without a scheme', metricsUrls: { 'etcd-1': '127.0.0.1:2381' }, says: 'clusters[1].metricsUrls.etcd-1: must be an http or https URL' },
    {
      what: 'another scheme',
      metricsUrls: { 'etcd-2': 'unix:///run/etcd-metrics.sock' },
      says: 'clusters[1].metricsUrls.etcd-2: must be an http or https URL',
    },
    { what: 'a relative path', metricsUrls: { 'etcd-1': '/metrics' }, says: 'clusters[1].metricsUrls.etcd-1: must be an http or https URL' },
    { what: 'a number', metricsUrls: { 'etcd-1': 2381 }, says: 'clusters[1].metricsUrls.etcd-1: must be an http or https URL' },
    { what: 'a list in place of the map', metricsUrls: ['http://127.0.0.1:2381'], says: 'clusters[1].metricsUrls: must be a record' },
    { what: 'credentials in the URL', metricsUrls: { 'etcd-1': 'http://root:pw@127.0.0.1:2381' }, says: 'clusters[1].metricsUrls.etcd-1: carries credentials' },
  ])('refuses $what, naming the field and the member', ({ metricsUrls, says }) => {
    const file = configWith({ metricsUrls });
    expect(() => loadConfig(file)).toThrow(ConfigError);
    expect(() => loadConfig(file)).toThrow(says);
  });

  it('quotes no credentials back', () => {
    const file = configWith({ metricsUrls: { 'etcd-1': 'http://root:s3cr3t@127.0.0.1:2381' } });
    expect(() => loadConfig(file)).toThrow(expect.objectContaining({ message: expect.not.stringContaining('s3cr3t') }));
  });
});
