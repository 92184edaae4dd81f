// Global setup of every project: the command line's bundle (infra/build/cli-build.ts), built when
// a source changed since the last build, before any test spawns the CLI. The tests then run the
// command line a user runs after `npm ci`; test/infra/image.test.ts runs the sources, as the image does.
import type { TestProject } from 'vitest/node';
import { ensureCli } from '../../infra/build/cli-build.ts';

export default async function setup(project: TestProject): Promise<void> {
  await ensureCli();
  project.onTestsRerun(async () => {
    await ensureCli();
  });
}
