// The machine's own clock, for every edge that is not a test.
import type { Clock } from '../../ports/clock.ts';

export const systemClock: Clock = { now: () => Date.now() };
