// The default stack, synthesized with its bundles once per `vitest run` and read by every test
// file that needs the bundled stack (stack.test.ts, the fault matrix's AWS rows): bundling the six
// functions is most of a synth's time. The first file to ask synthesizes into the run's folder
// (shared-synth-setup.ts makes it) under a lock; the others wait for it and read what it wrote.
// Outside such a run (a script run by node, another config) each process synthesizes its own.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Template } from 'aws-cdk-lib/assertions';
import { SHARED_SYNTH_DIR_VAR } from './shared-synth-setup.ts';
import { synthStack, type CfnTemplate, type SynthesizedFiles } from './synth.ts';

/** How long a file waits for the synth another file is making: a synth under a loaded suite has taken 90 s. */
export const SHARED_SYNTH_TIMEOUT_MS = 240_000;

const NAME = 'default';

interface Written {
  assemblyDir: string;
  templateFile: string;
  ms: number;
}

/** The default stack (synthStack()), bundled: made here, or read from the file another test wrote. */
export async function sharedStack(): Promise<SynthesizedFiles> {
  const root = process.env[SHARED_SYNTH_DIR_VAR];
  if (!root) return synthStack();
  const done = join(root, `${NAME}.json`);
  const failed = join(root, `${NAME}.error`);
  try {
    // mkdir is atomic: one file of the run wins the lock and synthesizes.
    mkdirSync(join(root, `${NAME}.lock`));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return readWhenWritten(done, failed);
  }
  try {
    const synthesized = synthStack({}, 'EtcdRemediator', { outdir: join(root, NAME) });
    const written: Written = { assemblyDir: synthesized.assemblyDir, templateFile: synthesized.templateFile, ms: synthesized.ms };
    // Renamed into place, so a reader never sees half a file.
    writeFileSync(`${done}.tmp`, JSON.stringify(written));
    renameSync(`${done}.tmp`, done);
    return synthesized;
  } catch (error) {
    // The waiting files fail with this synth's error, at once, rather than at their timeout.
    writeFileSync(failed, error instanceof Error ? (error.stack ?? error.message) : String(error));
    throw error;
  }
}

async function readWhenWritten(done: string, failed: string): Promise<SynthesizedFiles> {
  const started = performance.now();
  while (!existsSync(done)) {
    if (existsSync(failed)) throw new Error(`the shared synth failed in another test file:\n${readFileSync(failed, 'utf8')}`);
    if (performance.now() - started > SHARED_SYNTH_TIMEOUT_MS) throw new Error(`the shared synth was not written in ${SHARED_SYNTH_TIMEOUT_MS} ms (${done})`);
    await sleep(200);
  }
  const written = JSON.parse(readFileSync(done, 'utf8')) as Written;
  const json = JSON.parse(readFileSync(written.templateFile, 'utf8')) as CfnTemplate;
  console.info(`synth EtcdRemediator: ${written.ms} ms in another test file, waited ${Math.round(performance.now() - started)} ms`);
  return { ...written, json, template: Template.fromJSON(json) };
}
