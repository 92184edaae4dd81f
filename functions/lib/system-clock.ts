// The machine's own clock, for every edge that is not a test. No one system's: the AWS bundles,
// the etcd and Kubernetes adapters and the embedded runtime all read it. It has the Clock port's
// shape (ports/clock.ts) without importing it, as lib imports nothing of ours.
import { setTimeout as sleep } from 'node:timers/promises';

export const systemClock = { now: (): number => Date.now(), sleep: async (ms: number): Promise<void> => void (await sleep(ms)) };
