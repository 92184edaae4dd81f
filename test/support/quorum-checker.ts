// A background quorum checker for the fault matrix: while a case runs, every 100 ms one linearizable
// write and then one linearizable read (etcd3 put, then get with serializable false) through one
// member, the next member in round-robin order each time, each outcome recorded with its time (a
// put refused for space under a NOSPACE alarm leaves the read alone to prove the quorum).
//
// Which members it asks: every lab member still in the cluster, on its REAL client port (directUrl),
// not through its fault proxy. A proxy fault ('cut', 'blackhole', a delay) only hides a healthy
// member from callers; it does not touch raft, so the checker must not count it as lost quorum. A
// member is skipped while it is known to be out of the cluster (removed, by us or by the case) or
// not running (the case stopped or killed it): a dead member cannot answer whatever the quorum is,
// so asking it proves nothing. What is left is exactly the question "does this cluster, as its live
// members see it, have a leader and a quorum that commit a write?".
//
// The rule, "quorum lost by our action":
//   A failure window is a run of consecutive failed samples, from the start of its first failed
//   sample to the start of the next successful one (or to the end of the check). Quorum is LOST when
//   some failure window is longer than the allowance, 3 × the cluster's election timeout, and is
//   not explained by a fault the case injected: a window is explained when the case had declared a
//   span (`injected(from, to)`: from its fault until the lab saw a leader again, or the whole case
//   when it takes a majority down: the quorum was gone before we did anything) that began before
//   the window's first failed sample ended (a sample in flight when the fault struck counts), and
//   the window ends no later than one allowance after the span's end.
//   Otherwise quorum is held.
//
// Why this rule: removing a leader (with or without a move), a leadership transfer, and a member
// killed by the case each cost the cluster at most one election. One election takes one election
// timeout plus a randomised extra of up to one more, and the put/get under way when it starts can
// fail at its deadline; 3 × the election timeout covers one election with that margin and nothing
// more. A removal that left the rest without a quorum (the one failure our action can cause) never
// heals on its own, so its window grows past any allowance: with 100 ms sampling it shows as LOST
// within 3 election timeouts, while the short gap of one election after our own leader removal
// does not. A fault window the case injected on purpose is explained by that fault, not by us.
import { Etcd3 } from 'etcd3';
import { etcd3Options } from '../../functions/adapters/etcd/member-client.ts';
import type { TlsFiles } from '../../functions/ports/etcd.ts';

export interface QuorumMember {
  name: string;
  /** The member's own client port, past any fault proxy. */
  directUrl: string;
}

export interface QuorumSample {
  /** Epoch ms at the start of the put. */
  at: number;
  /** Epoch ms when the get answered or either failed. */
  end: number;
  member: string;
  ok: boolean;
  error?: string;
}

export interface FailureWindow {
  from: number;
  to: number;
  ms: number;
  members: string[];
  firstError: string;
  /** Inside a span the case injected. */
  injected: boolean;
}

export interface QuorumVerdict {
  quorum: 'held' | 'LOST';
  samples: number;
  failed: number;
  allowanceMs: number;
  windows: FailureWindow[];
  /** One line, for the matrix row's explanation when LOST. */
  summary: string;
}

export interface QuorumCheckerOptions {
  members: () => QuorumMember[];
  /** True when the member is out of the cluster or not running: it is not asked. */
  skip?: (name: string) => boolean;
  electionTimeoutMs: number;
  intervalMs?: number;
  /** Deadline of the put and of the get; one election timeout by default. */
  callMs?: number;
  tls?: TlsFiles;
}

export interface QuorumChecker {
  readonly samples: QuorumSample[];
  /** Declares [from, to] (epoch ms; `to` open while undefined) as unavailability the case injected. */
  injected(from: number, to?: number): void;
  stop(): Promise<QuorumVerdict>;
}

export function startQuorumChecker(options: QuorumCheckerOptions): QuorumChecker {
  const intervalMs = options.intervalMs ?? 100;
  // One election timeout: a put caught by an election fails at once or at this deadline, so one
  // stuck call cannot by itself make a window look longer than an election.
  const callMs = options.callMs ?? options.electionTimeoutMs;
  const samples: QuorumSample[] = [];
  const spans: { from: number; to?: number }[] = [];
  const clients = new Map<string, Etcd3>();
  const clientFor = (m: QuorumMember): Etcd3 => {
    let c = clients.get(m.directUrl);
    if (!c) {
      c = new Etcd3(etcd3Options(m.directUrl, options.tls ? { tls: options.tls } : {}));
      clients.set(m.directUrl, c);
    }
    return c;
  };
  let stopped = false;
  let turn = 0;
  const key = `/quorum-checker/${process.pid}`;

  const one = async (): Promise<void> => {
    const live = options.members().filter((m) => !(options.skip?.(m.name) ?? false));
    if (live.length === 0) return;
    const m = live[turn++ % live.length]!;
    const at = Date.now();
    const value = String(at);
    try {
      const etcd = clientFor(m);
      // Under a NOSPACE alarm etcd refuses the put before raft sees it: the alarm's doing, not a lost
      // quorum. The linearizable read alone then proves a leader and a quorum.
      const full = await etcd
        .put(key)
        .value(value)
        .options({ deadline: new Date(Date.now() + callMs) })
        .then(
          () => false,
          (error: unknown) => {
            if (/database space exceeded/.test(String(error))) return true;
            throw error;
          },
        );
      const read = await etcd
        .get(key)
        .serializable(false)
        .options({ deadline: new Date(Date.now() + callMs) })
        .string();
      // Another sample may have written since; a value no older than ours proves the read saw our write.
      if (!full && (read === null || Number(read) < at)) throw new Error(`read ${String(read)} after writing ${value}`);
      samples.push({ at, end: Date.now(), member: m.name, ok: true });
    } catch (error) {
      samples.push({ at, end: Date.now(), member: m.name, ok: false, error: (error as Error).message.split('\n')[0]!.slice(0, 200) });
    }
  };

  const loop = (async () => {
    while (!stopped) {
      const started = Date.now();
      await one();
      const wait = Math.max(0, intervalMs - (Date.now() - started));
      if (!stopped) await new Promise((resolve) => setTimeout(resolve, wait));
    }
  })();

  return {
    samples,
    injected(from, to) {
      spans.push(to === undefined ? { from } : { from, to });
    },
    async stop() {
      stopped = true;
      await loop;
      for (const c of clients.values()) c.close();
      return judge(samples, spans, 3 * options.electionTimeoutMs);
    },
  };
}

/** The rule of the file header, applied to recorded samples. */
export function judge(samples: QuorumSample[], spans: { from: number; to?: number }[], allowanceMs: number): QuorumVerdict {
  const windows: FailureWindow[] = [];
  let open: { from: number; firstEnd: number; members: Set<string>; firstError: string } | undefined;
  const close = (to: number): void => {
    if (!open) return;
    // The injected fault was in place before the window's first failure was seen (a sample in
    // flight when the case struck counts), and the window heals within one allowance of the span's end.
    const { firstEnd } = open;
    const inside = spans.some((s) => s.from <= firstEnd && (s.to === undefined || (open!.from <= s.to && to <= s.to + allowanceMs)));
    windows.push({ from: open.from, to, ms: to - open.from, members: [...open.members], firstError: open.firstError, injected: inside });
    open = undefined;
  };
  for (const s of samples) {
    if (s.ok) close(s.at);
    else {
      open ??= { from: s.at, firstEnd: s.end, members: new Set(), firstError: s.error ?? '' };
      open.members.add(s.member);
    }
  }
  if (open) close(samples.at(-1)!.end);
  const lost = windows.filter((w) => w.ms > allowanceMs && !w.injected);
  const failed = samples.filter((s) => !s.ok).length;
  const longest = windows.reduce((a, w) => Math.max(a, w.ms), 0);
  return {
    quorum: lost.length > 0 ? 'LOST' : 'held',
    samples: samples.length,
    failed,
    allowanceMs,
    windows,
    summary:
      lost.length > 0
        ? `quorum lost for ${lost.map((w) => `${w.ms} ms via ${w.members.join(',')} (${w.firstError})`).join('; ')} > ${allowanceMs} ms`
        : `${samples.length} samples, ${failed} failed, longest failure window ${longest} ms (allowance ${allowanceMs} ms)`,
  };
}
