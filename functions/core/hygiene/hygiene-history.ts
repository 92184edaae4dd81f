// What one periodic check adds to a cluster's hygiene record, pure: each member's new scrape makes
// a sample of the interval since its last one (hygiene-signals-from.ts), samples older than the
// policy reads are dropped, members gone from the cluster forgotten, and the moves kept to a day.
import { signalsBetween } from './hygiene-signals-from.ts';
import { PEER_ROUND_TRIP_OBSERVED_EVERY_MS } from './leader-degradation.ts';
import type { MemberScrape } from './hygiene-signals.ts';
import type { HygieneRecord } from './hygiene-record.ts';
import type { Policy } from '../policy/index.ts';
import type { MemberId } from '../common/index.ts';

const DAY_MS = 86_400_000;

/**
 * How far back the policy reads: the no-election span, a breach's window and its exit window, or
 * back to etcd's last round-trip observation, and two checks more so the oldest kept sample still
 * reaches back past the span.
 */
export const samplesKeptMs = (hygiene: Policy['hygiene']): number =>
  Math.max(hygiene.recentElectionsMs, 2 * hygiene.windowMs, PEER_ROUND_TRIP_OBSERVED_EVERY_MS + hygiene.checkEveryMs) + 2 * hygiene.checkEveryMs;

export function withScrapes(
  record: HygieneRecord,
  scrapes: readonly MemberScrape[],
  members: readonly MemberId[],
  now: number,
  hygiene: Policy['hygiene'],
): HygieneRecord {
  const keptSince = now - samplesKeptMs(hygiene);
  const lastScrapes: HygieneRecord['lastScrapes'] = {};
  const samples: HygieneRecord['samples'] = {};
  for (const id of members) {
    const before = record.lastScrapes[id];
    const scrape = scrapes.find((s) => s.memberId === id);
    const kept = (record.samples[id] ?? []).filter((s) => s.at > keptSince);
    // A scrape no later than the last one (a clock step back) makes no interval: the old one stays.
    if (scrape && before && scrape.at > before.at) kept.push(signalsBetween(before, scrape));
    const last = scrape && (!before || scrape.at > before.at) ? scrape : before;
    if (last) lastScrapes[id] = last;
    samples[id] = kept;
  }
  const lastMove = record.moves.at(-1);
  const moves = record.moves.filter((m) => m.at > now - DAY_MS || m === lastMove);
  return { ...record, lastScrapes, samples, moves };
}
