// Shared by the local-runtime tests: a throwaway database file, a deadline-bound wait on a plain
// condition (the project's waitFor, in the shape these tests use), and etcd that never answers.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ClusterEtcd } from '../../../functions/ports/cluster-etcd.ts';
import { parsePolicy } from '../../../functions/core/policy/policy.ts';
import { createLocalRuntime, type LocalRuntime } from '../../../infra/runtime/runtime.ts';
import { createStaticDirectory } from '../../../functions/adapters/local/static-directory.ts';
import { waitFor as pollUntil } from '../../../functions/lib/wait-for.ts';

/** A probe that never answers: an incident stays open while a test looks at it. */
export const silentEtcd = (): ClusterEtcd => ({ prober: { probe: () => new Promise(() => undefined) } }) as unknown as ClusterEtcd;

export interface TempDir {
  path: string;
  file(name: string): string;
  remove(): void;
}

export function tempDir(): TempDir {
  const path = mkdtempSync(join(tmpdir(), 'etcd-remediator-store-'));
  return {
    path,
    file: (name) => join(path, name),
    remove: () => rmSync(path, { recursive: true, force: true }),
  };
}

/** Polls until `condition` holds; fails with `what` once the deadline passes. */
export const waitFor = (condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 5_000): Promise<void> =>
  pollUntil(async () => ((await condition()) ? true : undefined), { timeoutMs, intervalMs: 5, what }).then(() => undefined);

/** A local runtime (not started) on a throwaway state file, for one cluster whose etcd never answers. */
export async function silentRuntime(clusterId: string): Promise<{ runtime: LocalRuntime; close: () => Promise<void> }> {
  const dir = tempDir();
  const runtime = await createLocalRuntime({
    statePath: dir.file('state.sqlite'),
    directory: createStaticDirectory([{ clusterId, endpoints: ['http://127.0.0.1:1'], policy: parsePolicy() }]),
    etcdFor: silentEtcd,
    logLevel: 'SILENT',
  });
  return {
    runtime,
    close: async () => {
      await runtime.stop({ drainTimeoutMs: 100 });
      dir.remove();
    },
  };
}

/** A kubeconfig that names one cluster on a loopback port nothing serves: enough to be read, never dialled. */
export const KUBECONFIG = JSON.stringify({
  apiVersion: 'v1',
  kind: 'Config',
  clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:1' } }],
  users: [{ name: 'u', user: { token: 't' } }],
  contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
  'current-context': 'x',
});
