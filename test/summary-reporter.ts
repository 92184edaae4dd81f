// Ends every run with one plain line, "vitest: N passed, N failed, N skipped", that any CI reads.
import type { Reporter, TestModule } from 'vitest/node';

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const count = { passed: 0, failed: 0, skipped: 0, pending: 0 };
    for (const module of testModules) {
      for (const test of module.children.allTests()) count[test.result().state] += 1;
    }
    process.stdout.write(`\nvitest: ${count.passed} passed, ${count.failed} failed, ${count.skipped} skipped\n`);
  }
}
