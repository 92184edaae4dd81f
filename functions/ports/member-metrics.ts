// Leader hygiene's reads of one member: its /metrics and its maintenance Status, as one scrape
// under one deadline. A member that cannot be scraped fails alone, named, with the URL and what
// failed; it never costs the others (app/view/scrape-members.ts).
import type { MemberScrape } from '../core/hygiene/index.ts';
import type { MemberInfo } from '../core/common/index.ts';

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
