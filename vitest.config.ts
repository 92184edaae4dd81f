import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    reporters: ['default', './test/summary-reporter.ts'],
    // Integration tests start real etcd processes, and most of a test's time is spent waiting on
    // them (elections, grace windows, delays): three files at once keep two cores about busy, where
    // two left one idle half of the time. More would starve the labs' 50 ms heartbeats.
    maxWorkers: 3,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
