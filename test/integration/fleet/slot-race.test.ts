// The cap on removals in flight with real concurrency: worker threads, each with a store client of
// its own, race for the slots of ONE sqlite file and of ONE dynalite table; never more than the cap
// hold a slot at once, and the cap is reached (the racers did overlap).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../../functions/adapters/local/sqlite-store.ts';
import { startDynalite, type Dynalite } from '../../support/dynalite.ts';
import type { RacerData } from './slot-racer.ts';

const RACER = new URL('./slot-racer.ts', import.meta.url);
const RACERS = 6;
const MAX = 2;

async function race(store: RacerData['store'], rounds: number): Promise<{ most: number; taken: number }> {
  const counters = new SharedArrayBuffer(8);
  const runs = Array.from({ length: RACERS }, (_, i) => {
    const worker = new Worker(RACER, { workerData: { store, name: `racer${i}`, max: MAX, rounds, counters } satisfies RacerData });
    return new Promise<number>((resolve, reject) => {
      worker.once('message', (m: { taken: number }) => resolve(m.taken));
      worker.once('error', reject);
      worker.once('exit', (code) => (code === 0 ? undefined : reject(new Error(`racer exited ${code}`))));
    });
  });
  const taken = (await Promise.all(runs)).reduce((a, b) => a + b, 0);
  return { most: new Int32Array(counters)[1]!, taken };
}

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'slot-race-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('removal slots raced by separate store clients', () => {
  it(`on one sqlite file: ${RACERS} racers never hold more than ${MAX} slots at once`, async () => {
    const path = join(dir, 'state.sqlite');
    // Migrated once before the racers open it.
    await openSqliteStore({ path }).close();
    const { most, taken } = await race({ kind: 'sqlite', path }, 60);
    expect(most).toBeLessThanOrEqual(MAX);
    expect(most).toBe(MAX);
    expect(taken).toBeGreaterThan(RACERS);
  });

  describe('on one dynalite table', () => {
    let dynamo: Dynalite;
    beforeAll(async () => {
      dynamo = await startDynalite();
    });
    afterAll(async () => dynamo?.close());

    it(`${RACERS} racers never hold more than ${MAX} slots at once`, async () => {
      const table = await dynamo.createTable();
      const { most, taken } = await race({ kind: 'dynamo', endpoint: dynamo.endpoint, table }, 15);
      expect(most).toBeLessThanOrEqual(MAX);
      expect(most).toBe(MAX);
      expect(taken).toBeGreaterThan(RACERS);
    });
  });
});
