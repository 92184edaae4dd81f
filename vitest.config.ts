import { defineConfig } from 'vitest/config';

// Pure tests (core, app over doubles, adapters over fakes) share one module graph per worker: each
// file otherwise loads etcd3, gRPC and zod's schemas anew, which was three quarters of their time.
// Tests that start processes, labs, servers or CDK apps keep a fresh graph per file.
const shared = ['test/unit/**/*.test.ts'];

export default defineConfig({
  test: {
    reporters: ['default', './test/summary-reporter.ts'],
    // Integration tests start real etcd processes, and most of a test's time is spent waiting on
    // them (elections, grace windows, delays): three files at once keep two cores about busy, where
    // two left one idle half of the time. More would starve the labs' 50 ms heartbeats.
    maxWorkers: 3,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    projects: [
      { extends: true, test: { name: 'unit', include: shared, isolate: false } },
      { extends: true, test: { name: 'isolated', include: ['test/**/*.test.ts'], exclude: shared } },
    ],
  },
});
