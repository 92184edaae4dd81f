// The adapter tests' single etcd: a member that cannot start fails the start at once, saying why,
// instead of being asked until the deadline.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { startSingleEtcd } from './single-etcd.ts';

it('an etcd that exits at start fails the start at once, with what it said', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'single-etcd-'));
  try {
    const missing = join(dir, 'missing.pem');
    const started = Date.now();
    const failure = await startSingleEtcd({
      certs: { dir, files: { ca: Buffer.alloc(0), cert: Buffer.alloc(0), key: Buffer.alloc(0) }, caFile: missing, certFile: missing, keyFile: missing },
    }).then(
      () => undefined,
      (error: Error) => error.message,
    );
    expect(failure).toMatch(/etcd exited 1: .*missing\.pem/s);
    expect(Date.now() - started).toBeLessThan(5_000);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
