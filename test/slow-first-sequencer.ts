// vitest's order, with the suite's slowest files first in their project. On a clean clone vitest
// has no timings cached and runs the largest files first; a short file that waits a minute on its
// labs (capi-watcher.test.ts is 230 lines) then starts late, and the suite ends on it with one core
// idle. The list is of the slowest files as the suite's own reporter prints them (measured on clean
// clones); a file not in it keeps vitest's place, so a stale entry costs nothing but its place.
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const SLOW_FIRST = [
  'test/integration/kube/capi-watcher.test.ts',
  'test/integration/kube/kube-scenarios.test.ts',
  'test/integration/e2e/key-material.test.ts',
  'test/integration/crash/failpoints.test.ts',
  'test/integration/kube/request-watcher-faults.test.ts',
  'test/integration/kube/mhc-watch.test.ts',
  'test/integration/cli/watch-events.test.ts',
  'test/integration/fleet/holds-across-states.test.ts',
  'test/integration/cli/kube-probe.test.ts',
  'test/integration/cli/kube-relay-paths.test.ts',
  'test/integration/e2e/scenarios.test.ts',
  'test/infra/bundling.test.ts',
  'test/infra/stack.test.ts',
];

const rank = (spec: TestSpecification): number => {
  const at = SLOW_FIRST.findIndex((file) => spec.moduleId.endsWith(file));
  return at < 0 ? SLOW_FIRST.length : at;
};

export default class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    // Stable: projects stay in vitest's order, and the rest of each keeps its place.
    const projectAt = new Map(sorted.map((spec, i) => [spec.project.name, i] as const));
    return [...sorted].sort((a, b) =>
      a.project.name === b.project.name ? rank(a) - rank(b) : projectAt.get(a.project.name)! - projectAt.get(b.project.name)!,
    );
  }
}
