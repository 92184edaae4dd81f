// Global setup of every project: the command line's bundle (infra/build/cli-build.ts), built when
// a source changed since the last build, before any test spawns the CLI. The tests then run the
// command line a user runs after `npm ci`; test/infra/image.test.ts runs the sources, as the image
// does. A bundle that cannot be built (node_modules read-only, say) leaves the bin on the sources,
// which it runs anyway when the bundle is not fresh: said, not fatal.
import type { TestProject } from 'vitest/node';
import { ensureCli } from '../../infra/build/cli-build.ts';

async function ensured(): Promise<void> {
  try {
    await ensureCli();
  } catch (error) {
    process.stderr.write(`the command line's bundle was not built, so the tests run its sources: ${error instanceof Error ? error.message : String(error)}\n`);
  }
}

export default async function setup(project: TestProject): Promise<void> {
  await ensured();
  project.onTestsRerun(ensured);
}
