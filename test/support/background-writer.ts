// A client writing to a lab, each put's latency kept, so a test can say what the cluster's write
// latency was before, during and after a fault: p50 and p99 of a span. A put belongs to the span it
// started in, and one still waiting when the span is read counts as long as it has waited: a write
// a stall holds is the stall's, not the next span's. Paced, a put at most every
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
  /** Every latency of the span, sorted: for a reader that merges the spans of several writers. */
  latenciesMs: number[];
}

/** The spans of several writers as one. */
export function mergedSpan(spans: readonly WriteLatency[]): WriteLatency {
  const sorted = spans.flatMap((s) => s.latenciesMs).sort((a, b) => a - b);
  return {
    writes: sorted.length,
    failed: spans.reduce((n, s) => n + s.failed, 0),
    p50Ms: quantile(sorted, 0.5),
    p99Ms: quantile(sorted, 0.99),
    latenciesMs: sorted,
  };
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
  /** Each put's start (performance.now()) and latency. */
  let done: { startedAt: number; ms: number }[] = [];
  const waiting = new Set<number>();
  let markedAt = performance.now();
  let failed = 0;
  let seq = 0;
  const worker = async (): Promise<void> => {
    while (running) {
      const started = performance.now();
      waiting.add(started);
      try {
        await client.put(`writer/${seq++ % 100}`).value(String(seq));
      } catch {
        if (started >= markedAt) failed += 1;
      }
      waiting.delete(started);
      const took = performance.now() - started;
      done.push({ startedAt: started, ms: took });
      if (running && took < paceMs) await new Promise((resolve) => setTimeout(resolve, paceMs - took));
    }
  };
  const workers = Array.from({ length: options.concurrency ?? 2 }, worker);
  return {
    mark() {
      markedAt = performance.now();
      done = done.filter((d) => d.startedAt + d.ms >= markedAt && d.startedAt >= markedAt);
      failed = 0;
    },
    span() {
      const now = performance.now();
      const latencies = [...done.filter((d) => d.startedAt >= markedAt).map((d) => d.ms), ...[...waiting].filter((at) => at >= markedAt).map((at) => now - at)];
      const sorted = latencies.sort((a, b) => a - b);
      return { writes: sorted.length, failed, p50Ms: quantile(sorted, 0.5), p99Ms: quantile(sorted, 0.99), latenciesMs: sorted };
    },
    async stop() {
      running = false;
      await Promise.all(workers);
      client.close();
    },
  };
}
