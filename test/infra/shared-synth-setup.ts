// Global setup of the isolated project: the run's folder for the shared synth (shared-synth.ts),
// handed to the test processes in the environment, emptied when watch mode reruns (the code may
// have changed) and removed at the end. Nothing is synthesized here: only a file that needs it does.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

/** The variable the test processes read the folder from (kept here: this file loads no CDK). */
export const SHARED_SYNTH_DIR_VAR = 'ETCD_REMEDIATOR_SHARED_SYNTH_DIR';

export default function setup(project: TestProject): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'etcd-remediator-synth-'));
  process.env[SHARED_SYNTH_DIR_VAR] = dir;
  project.onTestsRerun(() => {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir);
  });
  return () => {
    rmSync(dir, { recursive: true, force: true });
    delete process.env[SHARED_SYNTH_DIR_VAR];
  };
}
