// Which incident a report belongs to when its selector is not the one the incident was opened
// with, or when that incident has already ended. Once resolved, an incident is its member: a
// report by id, by name or by an alias of the same member joins it. A report observed before a
// remediation of its member ended describes what that remediation fixed: a late duplicate.
import type { IncidentState } from './incident.ts';
import { targetKeyOf } from './target.ts';

export interface IncidentSummary {
  incidentId: string;
  state: IncidentState;
  targetKey: string;
  memberId?: string;
  memberName?: string;
  /** For a closed incident, when it closed. */
  updatedAt: number;
}

export type ReportMatch = { kind: 'open' | 'late'; incidentId: string } | undefined;

export function namesSameMember(selector: Record<string, string>, incident: IncidentSummary, aliases: Record<string, string> = {}): boolean {
  if (targetKeyOf(selector) === incident.targetKey) return true;
  if (selector.memberId !== undefined && incident.memberId === selector.memberId.toLowerCase()) return true;
  const name = selector.memberName ?? selector.nodeName ?? selector.machineName ?? selector.instanceId;
  return name !== undefined && !!incident.memberName && (aliases[name] ?? name) === incident.memberName;
}

export function matchReport(
  report: { target: Record<string, string>; observedAt: number },
  incidents: readonly IncidentSummary[],
  options: { now: number; windowMs: number; aliases?: Record<string, string> },
): ReportMatch {
  const same = incidents.filter((i) => namesSameMember(report.target, i, options.aliases));
  const open = same.find((i) => i.state === 'open');
  if (open) return { kind: 'open', incidentId: open.incidentId };
  const late = same
    .filter((i) => i.state === 'remediated' && options.now - i.updatedAt <= options.windowMs && report.observedAt <= i.updatedAt)
    .sort((a, b) => b.updatedAt - a.updatedAt)[0];
  return late ? { kind: 'late', incidentId: late.incidentId } : undefined;
}
