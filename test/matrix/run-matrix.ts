// `npm run matrix`: every case of the fault matrix (cases.ts) on a real lab, one after another, one
// line each, then `matrix: P/N as expected`. Exits non-zero on any mismatch. Arguments (or
// MATRIX_CASES, comma-separated) pick cases by name or number.
import { matrixCases } from './cases.ts';
import { asExpected, formatRow, runCase, type CaseRow } from './harness.ts';

const picked = [...process.argv.slice(2), ...(process.env.MATRIX_CASES?.split(',') ?? [])].map((s) => s.trim()).filter(Boolean);
const cases = picked.length === 0 ? matrixCases : matrixCases.filter((c) => picked.includes(c.name) || picked.includes(String(c.n)));
if (cases.length === 0) {
  console.error(`no case named ${picked.join(', ')}; cases: ${matrixCases.map((c) => `${c.n} ${c.name}`).join(', ')}`);
  process.exit(2);
}

const rows: CaseRow[] = [];
for (const c of cases) {
  const row = await runCase(c);
  rows.push(row);
  console.log(formatRow(row));
  if (process.env.MATRIX_VERBOSE)
    console.log(
      `  sent MemberRemove ${row.sent ?? 0}, retries ${row.retries}, quorum ${row.verdict?.summary}\n  said: ${(row.messages ?? []).join('\n  said: ')}`,
    );
  for (const p of row.problems) console.log(`  ! ${p}`);
}
const passed = rows.filter(asExpected).length;
console.log(`matrix: ${passed}/${rows.length} as expected`);
process.exitCode = passed === rows.length ? 0 : 1;
