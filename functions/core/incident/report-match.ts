// Which incident a report belongs to when its selector is not the one the incident was opened
// with, or when that incident has already ended. Once resolved, an incident is its member: a
// report by id, by name, by an alias of the same member, or by the Machine or Node its views place
// that member on, joins it. A report observed before a remediation of its member ended describes
// what that remediation fixed: a late duplicate.
import type { HostEvidence } from '../common/index.ts';
import type { IncidentState } from './incident.ts';
import { askedForMachine } from './incident-endings.ts';
import { targetKeyOf } from '../view/index.ts';

export interface IncidentSummary {
  incidentId: string;
  state: IncidentState;
  targetKey: string;
  memberId?: string;
  memberName?: string;
  /** For a closed incident, when it closed. */
  updatedAt: number;
  /** Its probes, oldest first: where its member runs (with kube access). */
  views?: readonly { members: readonly { id: string; host?: HostEvidence }[] }[];
}

/** Where the newest view that lists the incident's member places it. */
function hostOf(incident: IncidentSummary): HostEvidence | undefined {
  if (!incident.memberId || !incident.views) return undefined;
  for (let i = incident.views.length - 1; i >= 0; i -= 1) {
    const member = incident.views[i]!.members.find((m) => m.id === incident.memberId);
    if (member) return member.host;
  }
  return undefined;
}

/** A Machine or Node selector naming the host the incident's member runs on. */
function namesItsHost(selector: Record<string, string>, incident: IncidentSummary): boolean {
  const host = hostOf(incident);
  if (!host) return false;
  if (selector.machineName !== undefined) return host.machine?.name === selector.machineName;
  return selector.nodeName !== undefined && host.node === selector.nodeName;
}

export type ReportMatch = { kind: 'open' | 'late'; incidentId: string } | undefined;

export function namesSameMember(selector: Record<string, string>, incident: IncidentSummary, aliases: Record<string, string> = {}): boolean {
  if (targetKeyOf(selector) === incident.targetKey) return true;
  if (selector.memberId !== undefined && incident.memberId === selector.memberId.toLowerCase()) return true;
  if (namesItsHost(selector, incident)) return true;
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
    .filter((i) => askedForMachine(i.state) && options.now - i.updatedAt <= options.windowMs && report.observedAt <= i.updatedAt)
    .sort((a, b) => b.updatedAt - a.updatedAt)[0];
  return late ? { kind: 'late', incidentId: late.incidentId } : undefined;
}
