// A kube world a test file's describe starts for its cases, and the pipeline they start on it, with
// vitest's hooks: apart from kube-world.ts, which benches and the matrix load without vitest.
import { afterAll, beforeAll } from 'vitest';
import type { KubeWorld } from './kube-world.ts';

/**
 * A world of the describe's (or file's) own, started before its cases, and the pipeline they start
 * on it: both ended after them, the pipeline first.
 */
export function kubeWorldPerDescribe<P extends { close(): Promise<void> }>(start: () => Promise<KubeWorld>): { world?: KubeWorld; pipeline?: P } {
  const current: { world?: KubeWorld; pipeline?: P } = {};
  beforeAll(async () => {
    current.world = await start();
  }, 60_000);
  afterAll(async () => {
    try {
      await current.pipeline?.close();
    } finally {
      await current.world?.down();
    }
  });
  return current;
}
