// Leader hygiene's scrape of every member at once, each under the same deadline: a member that
// fails is an outcome of its own, never the loss of the others.
import type { MemberInfo } from '../../core/common/index.ts';
import { MemberScrapeError, type MemberMetrics } from '../../ports/member-metrics.ts';
import type { MemberScrape } from '../../core/hygiene/index.ts';

export type ScrapeOutcome = { member: MemberInfo; scrape: MemberScrape } | { member: MemberInfo; error: MemberScrapeError };

/**
 * Every member scraped at once, each under the same deadline; a failure is an outcome, not a
 * throw. Each scrape is stamped with how long its member took to answer (answerMs), whatever the
 * adapter: the one figure of a stall every member shows alike.
 */
export const scrapeEvery = (metrics: MemberMetrics, members: readonly MemberInfo[], deadlineMs: number): Promise<ScrapeOutcome[]> =>
  Promise.all(
    members.map((member) => {
      const started = performance.now();
      return metrics.scrape(member, deadlineMs).then(
        (scrape): ScrapeOutcome => ({ member, scrape: { ...scrape, answerMs: Math.round((performance.now() - started) * 10) / 10 } }),
        (error: unknown): ScrapeOutcome => ({
          member,
          error: error instanceof MemberScrapeError ? error : new MemberScrapeError(member, member.clientUrls[0] ?? '', String(error), { cause: error }),
        }),
      );
    }),
  );
