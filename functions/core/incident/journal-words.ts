// Each journal line in words, for timelines (the CLI, status, RemediationCompleted): said from the
// line's fields, one sentence per step, so no reader ever has to take the words apart again.
import { describeDuration, describeTime } from '../view/index.ts';
import { isDecisionLine, isMoveMadeLine, type JournalInput } from './journal.ts';

export interface TimelineEntry {
  at: string;
  step: string;
  detail: string;
}

export function journalWords(entry: JournalInput): string {
  if (isDecisionLine(entry)) return `${entry.detail.reason}: ${entry.detail.message}`;
  if (isMoveMadeLine(entry)) return `${entry.detail.decision.reason}: ${entry.detail.decision.message}`;
  switch (entry.step) {
    case 'incident-opened': {
      const d = entry.detail;
      return `${d.source} reported ${d.targetKey}: ${d.reason} (observed ${d.observedAt})`;
    }
    case 'duplicate-joined': {
      const d = entry.detail;
      return 'incidentId' in d ? `incident ${d.incidentId} (${d.reportedAs}) names the same member; it ends` : `${d.source}: ${d.reason}`;
    }
    case 'late-duplicate': {
      const d = entry.detail;
      return `${d.source}: ${d.reason} (observed ${d.observedAt}, before the remediation ended)`;
    }
    case 'probed': {
      const d = entry.detail;
      if (d.members > 0) return `${d.answered} of ${d.members} members answered; leader ${d.leader}${d.leaderName ? ` (${d.leaderName})` : ''}`;
      const asked = d.listFailures.map((f) => `${f.endpoint}: ${f.reachability} after ${f.latencyMs} ms`).join('; ');
      return `no endpoint gave a member list (${asked || 'none asked'})`;
    }
    case 'retry-scheduled':
    case 'resumed':
      return `attempt ${entry.detail.attempt} at ${entry.detail.at} (${entry.detail.reason})`;
    case 'step-failed': {
      const d = entry.detail;
      return `${d.functionName} failed on every delivery of ${d.detailType} (attempt ${d.attempt}): ${d.error}; resumed at attempt ${d.resumedAttempt} at ${d.at}`;
    }
    case 'leader-moved':
      return entry.detail.message;
    case 'lock-taken':
      return `held by ${entry.detail.owner} in ${entry.detail.where}`;
    case 'lock-released':
      return `${entry.detail.owner} let go of ${entry.detail.where}`;
    case 'snapshot-taken': {
      const { location, via, bytes, sha256, tookMs } = entry.detail;
      return `${location} (through ${via}, ${bytes} bytes, sha256 ${sha256}, in ${describeDuration(tookMs)})`;
    }
    case 'snapshot-failed': {
      const d = entry.detail;
      return `${d.problem}${d.required ? '' : '; the policy does not require one, so the removal goes on without it'}`;
    }
    case 'member-removed': {
      const d = entry.detail;
      if ('absentFromList' in d) return `${d.absentFromList} is no longer in the member list${d.removedBy ? `, removed by ${d.removedBy}` : ''}`;
      return `${d.alreadyGone ? 'already gone, said' : 'removed through'} ${d.via}`;
    }
    case 'leader-elected': {
      const { id, name, term, afterRemovalMs } = entry.detail;
      const who = name ? `${name} (${id})` : id;
      return `${who} leads${term === undefined ? '' : ` at term ${term}`}${afterRemovalMs === undefined ? '' : `, ${describeDuration(afterRemovalMs)} after the removal`}`;
    }
    case 'actuator-called':
      return `${entry.detail.actuator}: ${entry.detail.said}`;
    case 'replacement-checked':
      return `${entry.detail.reason}: ${entry.detail.message}`;
    case 'learner-seen':
      return `learner ${entry.detail.memberId} first seen${entry.detail.peerURLs.length > 0 ? ` (peer ${entry.detail.peerURLs.join(', ')})` : ''}`;
    case 'learner-removed':
      return `${entry.detail.message} Removed through ${entry.detail.via}.`;
  }
}

/** The journal as a timeline: ISO times, step names, and each line in words. */
export const timelineOf = (journal: readonly JournalInput[]): TimelineEntry[] =>
  journal.map((e) => ({ at: describeTime(e.at), step: e.step, detail: journalWords(e) }));
