// The fast rows of the fault matrix, as `npm test` runs them: each judged by the harness `npm run
// matrix` uses, and expected to end as its row says with quorum held throughout.
import { expect } from 'vitest';
import { matrixCases } from './cases.ts';
import { formatRow, runCase, type MatrixCase } from './harness.ts';

export const isAwsCase = (c: MatrixCase): boolean => c.name.startsWith('aws-');

/** The fast rows that `keep`, as `it.each` takes them: [title, case]. */
export const fastRows = (keep: (c: MatrixCase) => boolean) => matrixCases.filter((c) => c.fast && keep(c)).map((c) => [`${c.n} ${c.name}`, c] as const);

export async function expectAsPlanned(c: MatrixCase): Promise<void> {
  const row = await runCase(c);
  expect(row.problems, formatRow(row)).toEqual([]);
  expect(row.actual).toBe(c.expected);
  expect(row.quorum).toBe('held');
}
