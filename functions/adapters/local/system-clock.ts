// The machine's own clock, for every edge that is not a test.
import type { Clock } from '../../ports/clock.ts';
import { setTimeout as sleep } from 'node:timers/promises';

export const systemClock: Clock = { now: () => Date.now(), sleep: async (ms) => void (await sleep(ms)) };
