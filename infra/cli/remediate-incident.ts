// Which incident `remediate` runs, and only that one. With --target: the target's open incident
// (resumed) or a new one; any other open incident in the state file is refused, named with the
// command that resumes it, never run on the side. With --resume: exactly the incident named.
import type { Incident } from '../../functions/ports/incident-store.ts';
import { targetKeyOf } from '../../functions/core/view/index.ts';
import { newIncidentId } from '../runtime/runtime.ts';
import { PROGRAM, UsageError } from './args.ts';
import { escapeControls } from './control-chars.ts';
import { findIncident, incidentRow } from './state.ts';

/** A member as MemberUnhealthy names it. */
export type Selector = { memberName: string } | { memberId: string } | { machineName: string } | { nodeName: string };

export interface Chosen {
  incidentId: string;
  /** Set when an open incident is resumed rather than a new one opened. */
  resumed?: Incident;
  /** For a new incident: the member it is about. */
  selector?: Selector;
  /** Other open incidents, left as they are. */
  others: Incident[];
}

interface Context {
  statePath: string;
  clusterId: string;
  /** The flags that reach this cluster, as given: `--endpoints …`, `--kubeconfig F --cluster NAME`, … */
  access: string;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** The command that resumes `incident`, with this cluster's access flags when it is this cluster's. */
export function resumeCommand(incident: Pick<Incident, 'incidentId' | 'clusterId'>, ctx: Context): string {
  const access = incident.clusterId === ctx.clusterId ? ctx.access : `--cluster ${incident.clusterId} --endpoints URL[,URL…]`;
  // A report may have named the incident: escaped, the command stays one line.
  return escapeControls(`${PROGRAM} remediate --resume ${incident.incidentId} --state ${ctx.statePath} ${access}`);
}

/** --target (or --machine, --node; `asked` names it): its own open incident or a new one; refused while any other incident is open. */
export function chooseForTarget(incidents: readonly Incident[], selector: Selector, asked: string, ctx: Context): Chosen {
  const open = incidents.filter((i) => i.state === 'open');
  const mine = open.find(
    (i) => i.clusterId === ctx.clusterId && (i.targetKey === targetKeyOf(selector) || ('memberId' in selector && i.memberId === selector.memberId)),
  );
  const others = open.filter((i) => i !== mine);
  if (others.length > 0) {
    throw new UsageError(
      [
        `${asked}: the state file ${ctx.statePath} holds ${plural(others.length, 'other open incident')}; remediate runs only what it is asked, so it starts nothing while ${others.length === 1 ? 'that one is' : 'they are'} open:`,
        ...others.map((i) => `  ${incidentRow(i)}\n    resume it alone: ${resumeCommand(i, ctx)}`),
        `  or resume them all: ${PROGRAM} run --config FILE (with "state": "${ctx.statePath}") resumes every open incident`,
        '  or give this remediation a state file of its own: --state OTHER_FILE',
      ].join('\n'),
    );
  }
  return mine ? { incidentId: mine.incidentId, resumed: mine, others } : { incidentId: newIncidentId(), selector, others };
}

/** --resume ID: exactly that incident, which must be open and of this cluster. */
export function chooseForResume(incidents: readonly Incident[], ref: string, ctx: Context): Chosen & { resumed: Incident } {
  const found = findIncident(incidents, ref);
  if (typeof found === 'string') throw new UsageError(`--resume ${ref}: ${found.replace('this state file', ctx.statePath)}`);
  if (found.state !== 'open') {
    throw new UsageError(
      `--resume ${found.incidentId}: the incident is ${found.state} already; nothing to resume (${PROGRAM} status ${found.incidentId} --state ${ctx.statePath} shows why)`,
    );
  }
  if (found.clusterId !== ctx.clusterId) {
    throw new UsageError(
      `--resume ${found.incidentId}: the incident is cluster ${found.clusterId}'s, not ${ctx.clusterId}'s; give --cluster ${found.clusterId} and that cluster's --endpoints`,
    );
  }
  return { incidentId: found.incidentId, resumed: found, others: incidents.filter((i) => i.state === 'open' && i !== found) };
}
