// Ends every run with the ten slowest files (where the suite's time goes, so a file that grows is
// seen) and one plain line, "vitest: N passed, N failed, N skipped", that any CI reads.
import type { Reporter, TestModule } from 'vitest/node';

const SLOWEST = 10;

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const count = { passed: 0, failed: 0, skipped: 0, pending: 0 };
    for (const module of testModules) {
      for (const test of module.children.allTests()) count[test.result().state] += 1;
    }
    const timed = testModules.map((m) => ({ file: m.relativeModuleId, ms: m.diagnostic().duration })).sort((a, b) => b.ms - a.ms);
    if (timed.length > 1) {
      const lines = timed.slice(0, SLOWEST).map((t) => `  ${(t.ms / 1000).toFixed(1).padStart(6)} s  ${t.file}`);
      process.stdout.write(`\nslowest files:\n${lines.join('\n')}\n`);
    }
    process.stdout.write(`\nvitest: ${count.passed} passed, ${count.failed} failed, ${count.skipped} skipped\n`);
  }
}
