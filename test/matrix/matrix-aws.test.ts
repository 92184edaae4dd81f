// The fault matrix's fast AWS rows in `npm test`: the deployed-stack simulation (the built bundles,
// the EventBridge and Scheduler fakes, dynalite) over a real lab, with a fault injected.
import { describe, it } from 'vitest';
import { expectAsPlanned, fastRows, isAwsCase } from './fast-rows.ts';

describe.sequential('fault matrix, AWS rows (fast subset; all cases: npm run matrix)', () => {
  it.each(fastRows(isAwsCase))('%s', async (_, c) => expectAsPlanned(c), 90_000);
});
