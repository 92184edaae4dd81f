import { defineConfig } from 'vitest/config';

// Test files share one module graph per worker: each file otherwise loaded etcd3, gRPC, the
// Kubernetes client and zod's schemas anew, 238 s of the suite's time (now about 30). Kept apart:
// the AWS handlers' tests (unit and integration), whose modules read their environment once, at import, as a Lambda
// cold start does; the CDK tests (CDK keeps asset caches in statics); the fault matrix's AWS wiring.
const isolated = [
  'test/integration/aws/**/*.test.ts',
  'test/unit/aws/**/*.test.ts',
  'test/infra/**/*.test.ts',
  'test/matrix/**/*.test.ts',
  'test/bench/**/*.test.ts',
];

// Scenarios that wait on etcd's own clocks for real (a peer's round trip is observed once in 30 s;
// a leader starved in cycles), hundreds of MiB written to fragment a lab, the seed cases through
// the simulated Cluster API end to end and the seed's three forms over the Kubernetes paths (each a
// minute of labs booted and replacements joined, the suite's two slowest files; capi-kcp-alone,
// capi-drain, request-watcher-*, kube-remediate and kube-probe prove their parts in the fast suite), every row of the fault matrix, and the seed case through the built
// Lambda bundles at the published per-hop latencies: minutes of waiting that prove the same code
// the fast suite covers. `npm run test:long` runs them; CI runs it after `npm test`.
const long = [
  'test/integration/hygiene/real-degradation.test.ts',
  'test/integration/e2e/nospace-maintenance.test.ts',
  'test/integration/hygiene/peer-delay.test.ts',
  'test/integration/aws/seed-case-aws.test.ts',
  'test/integration/e2e/fragmentation-maintenance.test.ts',
  'test/integration/kube/capi-watcher.test.ts',
  'test/integration/kube/kube-scenarios.test.ts',
  'test/integration/kube/kube-maintenance-disruption.test.ts',
  'test/matrix/**/*.test.ts',
];

export default defineConfig({
  test: {
    reporters: ['default', './test/summary-reporter.ts'],
    // Integration tests start real etcd processes, and most of a test's time is spent waiting on
    // them (elections, grace windows, delays): four files at once keep two cores about busy, where
    // three left a third of them idle (measured side by side: 378 s against 425 s, the cores 1.86
    // against 1.62 busy). Each file's deadlines are set for a loaded machine, not an idle one.
    maxWorkers: 4,
    // Every project's: the command line's bundle, fresh, before a test spawns it.
    globalSetup: ['test/support/cli-bundle-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    projects: [
      { extends: true, test: { name: 'shared', include: ['test/**/*.test.ts'], exclude: [...isolated, ...long], isolate: false } },
      // The run's folder for the bundled stack the CDK tests and the matrix's AWS rows share (test/infra/shared-synth.ts).
      { extends: true, test: { name: 'isolated', include: isolated, exclude: long, globalSetup: ['test/infra/shared-synth-setup.ts'] } },
      // `npm run test:long` runs them one file at a time: a leader starved for real, a lab fragmented
      // by hundreds of MiB and the simulated Cluster API's minute of labs each judge what the machine gives them.
      { extends: true, test: { name: 'long', include: long, globalSetup: ['test/infra/shared-synth-setup.ts'] } },
    ],
  },
});
