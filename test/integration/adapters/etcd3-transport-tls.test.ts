import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createEtcd3Transport } from '../../../functions/adapters/etcd/index.ts';
import type { EtcdTransport } from '../../../functions/ports/etcd.ts';
import { failureOf, makeCerts, startSingleEtcd, type CertSet, type SingleEtcd } from './single-etcd.ts';

const DEADLINE_MS = 1_000;

describe('etcd3 transport over mTLS', () => {
  let dir: string;
  let good: CertSet;
  let stranger: CertSet;
  let etcd: SingleEtcd;
  let transport: EtcdTransport | undefined;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'etcd-tls-'));
    good = await makeCerts(dir, 'cluster');
    stranger = await makeCerts(dir, 'stranger');
    etcd = await startSingleEtcd({ certs: good });
  });
  afterAll(async () => {
    await etcd?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  afterEach(async () => {
    await transport?.close();
    transport = undefined;
  });

  it('talks to an https endpoint with the cluster CA and a client certificate', async () => {
    transport = createEtcd3Transport({ tls: good.files });
    const status = await transport.client({ endpoint: etcd.endpoint, path: 'direct' }).status(DEADLINE_MS);
    expect(status.leaderId).not.toBe('0');
    // What maintenance reads fragmentation from (etcd 3.4 on): some bytes in use, never more than the file.
    expect(status.dbSizeInUse).toBeGreaterThan(0);
    expect(status.dbSizeInUse).toBeLessThanOrEqual(status.dbSize);
  });

  it('classifies a server certificate from an unknown CA as "tls"', async () => {
    transport = createEtcd3Transport({ tls: stranger.files });
    const failure = await failureOf(transport.client({ endpoint: etcd.endpoint, path: 'direct' }).status(DEADLINE_MS));
    expect(failure.kind).toBe('tls');
  });

  it('classifies a missing client certificate as "tls"', async () => {
    transport = createEtcd3Transport({ tls: { ca: good.files.ca } });
    const failure = await failureOf(transport.client({ endpoint: etcd.endpoint, path: 'direct' }).status(DEADLINE_MS));
    expect(failure.kind).toBe('tls');
  });
});
