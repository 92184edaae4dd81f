// The edge of `run`: one MemberUnhealthy as text (an HTTP body or a stdin line) in, accepted or
// refused out. A refused input is dead-lettered with the field and problem that refused it;
// nothing is accepted that the pipeline would then drop.
import { parseEvent } from '../../events/validate.ts';
import { InvalidEventError } from '../../functions/lambda/event-handler.ts';
import { selectorOf, targetKeyOf } from '../../functions/core/view/index.ts';
import type { Incident } from '../../functions/ports/incident-store.ts';
import { newIncidentId, type LocalRuntime } from '../runtime/runtime.ts';

export type IntakeReply =
  | { accepted: true; incidentId: string; joined: boolean }
  /** `conflict`: valid, but at odds with the incident it names (HTTP 409). */
  | { accepted: false; error: string; field: string; deadLetterId: string; conflict?: true };

export type Refusal = Extract<IntakeReply, { accepted: false }>;

/**
 * An input over the size limit (an HTTP body, a stdin line): dead-lettered by its size, since
 * keeping it is what the limit is there to prevent.
 */
export async function refuseTooLarge(
  runtime: LocalRuntime,
  source: string,
  field: '(body)' | '(line)',
  sizeBytes: number,
  limitBytes: number,
): Promise<Refusal> {
  const error = `MemberUnhealthy is invalid: ${field}: is ${sizeBytes} bytes, over the limit of ${limitBytes} bytes`;
  const payload = `(not kept: ${sizeBytes} bytes, over the limit of ${limitBytes} bytes)`;
  const dead = await runtime.store.putDeadLetter({ receivedAt: Date.now(), source, detailType: 'MemberUnhealthy', payload, error });
  return { accepted: false, error, field, deadLetterId: dead.id };
}

/**
 * Why a report naming `incident` cannot join it: the incident is closed (the pipeline would drop
 * the report), or it is another cluster's or target's. The same member by its resolved id or
 * name is the same target.
 */
export function conflictWith(incident: Incident, clusterId: string, selector: Record<string, string>): string | undefined {
  const key = targetKeyOf(selector);
  const sameMember =
    (selector.memberId !== undefined && selector.memberId.toLowerCase() === incident.memberId) ||
    (Object.keys(selector).length === 1 && selector.memberName !== undefined && selector.memberName === incident.memberName);
  if (incident.clusterId !== clusterId || (incident.targetKey !== key && !sameMember)) {
    return `incident ${incident.incidentId} is for ${incident.clusterId}/${incident.targetKey}, not ${clusterId}/${key}; report without incidentId, or with this target's own`;
  }
  if (incident.state !== 'open') {
    return `incident ${incident.incidentId} is ${incident.state} already; report again without incidentId to open a new incident`;
  }
  return undefined;
}

export function createIntake(runtime: LocalRuntime, clusterIds: string[]): (text: string, source: string) => Promise<IntakeReply> {
  /** The incident id last named for each cluster and target. */
  const namedHere = new Map<string, string>();
  const refuse = async (source: string, text: string, field: string, problem: string): Promise<IntakeReply> => {
    const error = `MemberUnhealthy is invalid: ${field}: ${problem}`;
    const dead = await runtime.store.putDeadLetter({ receivedAt: Date.now(), source, detailType: 'MemberUnhealthy', payload: text, error });
    return { accepted: false, error, field, deadLetterId: dead.id };
  };
  const conflict = async (source: string, text: string, problem: string): Promise<IntakeReply> => {
    const error = `MemberUnhealthy conflicts: incidentId: ${problem}`;
    const dead = await runtime.store.putDeadLetter({ receivedAt: Date.now(), source, detailType: 'MemberUnhealthy', payload: text, error });
    return { accepted: false, error, field: 'incidentId', deadLetterId: dead.id, conflict: true };
  };

  return async (text, source) => {
    let detail: unknown;
    try {
      detail = JSON.parse(text);
    } catch (error) {
      return refuse(source, text, '(body)', `is not JSON: ${(error as Error).message}`);
    }
    // This edge produces the bus event, so the event's own time is ours to stamp when absent.
    if (typeof detail === 'object' && detail !== null && !Array.isArray(detail) && !('at' in detail)) {
      detail = { ...detail, at: new Date().toISOString() };
    }
    const parsed = parseEvent('MemberUnhealthy', detail);
    if (!parsed.ok) {
      // submit() validates again and writes the dead letter, as for any input refused at the edge.
      try {
        await runtime.submit(detail, source);
      } catch (error) {
        if (!(error instanceof InvalidEventError)) throw error;
        return { accepted: false, error: error.message, field: parsed.error.issues[0]?.path ?? '(detail)', deadLetterId: error.deadLetterId };
      }
      throw new Error('an invalid MemberUnhealthy was accepted');
    }
    if (parsed.event.detailType !== 'MemberUnhealthy') throw new Error('parsed as another detail type');
    const { clusterId, target } = parsed.event.detail;
    if (!clusterIds.includes(clusterId)) {
      return refuse(source, text, 'clusterId', `${JSON.stringify(clusterId)} is not a configured cluster (configured: ${clusterIds.join(', ')})`);
    }
    let incidentId = parsed.event.detail.incidentId;
    let joined: boolean;
    if (incidentId !== undefined) {
      const named = await runtime.store.getIncident(incidentId);
      const problem = named && conflictWith(named, clusterId, selectorOf(target));
      if (problem) return conflict(source, text, problem);
      joined = named !== undefined;
    } else {
      // Name the incident here so the caller can follow it; a duplicate joins the one already open,
      // or the one named here a moment ago whose opening is still on its way through the bus.
      const key = targetKeyOf(selectorOf(target));
      const open = (await runtime.store.listIncidents({ clusterId, state: 'open' })).find((i) => i.targetKey === key);
      const slot = `${clusterId}\n${key}`;
      const named = open ? undefined : namedHere.get(slot);
      const pending = named !== undefined && ((await runtime.store.getIncident(named))?.state ?? 'open') === 'open';
      joined = open !== undefined || pending;
      incidentId = open?.incidentId ?? (pending ? named : newIncidentId());
      namedHere.set(slot, incidentId);
    }
    await runtime.submit({ ...(detail as object), incidentId }, source);
    return { accepted: true, incidentId, joined };
  };
}
