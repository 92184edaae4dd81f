// Shared by the local-runtime tests: a throwaway database file, a deadline-bound wait on a plain
// condition (the project's waitFor, in the shape these tests use), and etcd that never answers.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ClusterEtcd } from '../../../functions/app/deps.ts';
import { waitFor as pollUntil } from '../../../functions/shared/wait-for.ts';

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
