// Leader hygiene's reads of one member: its /metrics and its maintenance Status, as one scrape
// under one deadline. A member that cannot be scraped fails alone, named, with the URL and what
// failed; scrapeEvery never lets it lose the others.
import type { MemberScrape } from '../core/hygiene-signals.ts';
import type { MemberInfo } from '../core/types.ts';

export class MemberScrapeError extends Error {
  readonly memberId: string;
  readonly memberName: string;
  /** The URL that failed: the /metrics URL, or the client URL Status was asked at. */
  readonly url: string;
  constructor(member: Pick<MemberInfo, 'id' | 'name'>, url: string, what: string, options?: { cause?: unknown }) {
    super(`member ${member.name || '(unstarted)'} (${member.id}): ${what}`, options);
    this.name = 'MemberScrapeError';
    this.memberId = member.id;
    this.memberName = member.name;
    this.url = url;
  }
}

export interface MemberMetrics {
  /** One scrape, settled within `deadlineMs`; rejects with a MemberScrapeError only. */
  scrape(member: MemberInfo, deadlineMs: number): Promise<MemberScrape>;
}

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
