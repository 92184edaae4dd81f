// A client writing to a lab, each put's latency kept, so a test can say what the cluster's write
// latency was before, during and after a fault: p50 and p99 of a span. Paced, a put at most every
// paceMs per worker: unpaced, a writer on loopback keeps a core busy with etcd's fsyncs and raft,
// and the other tests on the machine pay for it.
import { Etcd3 } from 'etcd3';
import { etcd3Options } from '../../functions/adapters/etcd/member-client.ts';
import type { TlsFiles } from '../../functions/ports/etcd.ts';

export interface WriteLatency {
  writes: number;
  failed: number;
  p50Ms: number;
  p99Ms: number;
}

export interface BackgroundWriter {
  /** Starts a new span: the latencies from now on. */
  mark(): void;
  /** The latencies since the last mark (or the start). */
  span(): WriteLatency;
  stop(): Promise<void>;
}

const quantile = (sorted: readonly number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;

/** Puts through every endpoint (the client picks and fails over), `concurrency` at a time, each worker's puts at least `paceMs` apart (default 10). */
export function startBackgroundWriter(endpoints: readonly string[], options: { tls?: TlsFiles; concurrency?: number; paceMs?: number } = {}): BackgroundWriter {
  const paceMs = options.paceMs ?? 10;
  const client = new Etcd3({ ...etcd3Options(endpoints[0]!, options.tls ? { tls: options.tls } : {}), hosts: [...endpoints] });
  let running = true;
  let latencies: number[] = [];
  let failed = 0;
  let seq = 0;
  const worker = async (): Promise<void> => {
    while (running) {
      const started = performance.now();
      try {
        await client.put(`writer/${seq++ % 100}`).value(String(seq));
      } catch {
        failed += 1;
      }
      const took = performance.now() - started;
      latencies.push(took);
      if (running && took < paceMs) await new Promise((resolve) => setTimeout(resolve, paceMs - took));
    }
  };
  const workers = Array.from({ length: options.concurrency ?? 2 }, worker);
  return {
    mark() {
      latencies = [];
      failed = 0;
    },
    span() {
      const sorted = [...latencies].sort((a, b) => a - b);
      return { writes: sorted.length, failed, p50Ms: quantile(sorted, 0.5), p99Ms: quantile(sorted, 0.99) };
    },
    async stop() {
      running = false;
      await Promise.all(workers);
      client.close();
    },
  };
}
