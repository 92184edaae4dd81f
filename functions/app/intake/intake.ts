// intake: outside health signals in, MemberUnhealthy on our bus out. Each machine a signal names is
// mapped to its cluster and member through the directory; what cannot be mapped or read is kept as
// a dead letter with the reason, and what says nothing about ill health is logged. Nothing is
// dropped silently.
import { EVENT_SOURCE, makeEvent, type DetailOf, type EventEnvelope } from '../../../events/catalogue.ts';
import { memberUnhealthySchema } from '../../../events/schemas/member-unhealthy.ts';
import { inputIssues, parseEvent, payloadOf } from '../../../events/validate.ts';
import { describeIssues, readSignal, type SignalReading, type SignalReport } from '../../core/intake/index.ts';
import type { Bus } from '../../ports/bus.ts';
import type { Clock } from '../../ports/clock.ts';
import { UnknownClusterError, type ClusterRegistry, type MemberLocation, type MemberLookup } from '../../ports/cluster-directory.ts';
import type { DeadLetters } from '../../ports/incident-store.ts';
import type { Log } from '../../ports/log.ts';

export interface IntakeDeps {
  store: Pick<DeadLetters, 'putDeadLetter'>;
  bus: Bus;
  /** Where a machine's member lives, and whether a cluster is registered: never an entry's credentials. */
  directory: MemberLookup & ClusterRegistry;
  clock: Clock;
  log: Log;
}

export interface IntakeResult {
  /** The signal's detail type, e.g. "EC2 Instance State-change Notification". */
  signal: string;
  published: DetailOf<'MemberUnhealthy'>[];
  deadLetters: { id: string; error: string }[];
  /** Why a well-formed signal led to nothing. */
  ignored?: string;
}

/** The source written on dead letters, so `status --dead-letters` says who refused them. */
export const INTAKE_SOURCE = 'intake';

/** A MemberUnhealthy sent to the intake may leave out what the intake can fill in. */
const directReportSchema = memberUnhealthySchema.extend({
  clusterId: memberUnhealthySchema.shape.clusterId.optional(),
  at: memberUnhealthySchema.shape.at.optional(),
});

type Refusal = { refused: string };
type Mapped = { detail: DetailOf<'MemberUnhealthy'> } | Refusal;

export async function intake(deps: IntakeDeps, raw: unknown): Promise<IntakeResult> {
  const reading = readSignal(raw);
  const result: IntakeResult = { signal: reading.signal, published: [], deadLetters: [] };
  if (reading.kind === 'ignored') {
    deps.log.info('intake: signal ignored', { signal: reading.signal, why: reading.why });
    return { ...result, ignored: reading.why };
  }
  const now = deps.clock.now();
  const mapped = await mapReading(deps, reading, raw, now);

  const details = distinct(mapped.flatMap((m) => ('detail' in m ? [m.detail] : [])));
  // Published before the dead letters are written: a retry after a failure in between publishes
  // again, which joins the open incident, rather than keeping a dead letter twice.
  if (details.length > 0) {
    await deps.bus.publish(...details.map((d): EventEnvelope => makeEvent('MemberUnhealthy', d)));
    for (const d of details)
      deps.log.info('intake: member reported unhealthy', { signal: reading.signal, clusterId: d.clusterId, target: d.target, reason: d.reason });
  }
  for (const m of mapped) {
    if ('refused' in m) result.deadLetters.push(await deadLetter(deps, raw, reading.signal, m.refused, now));
  }
  return { ...result, published: details };
}

async function mapReading(deps: IntakeDeps, reading: Exclude<SignalReading, { kind: 'ignored' }>, raw: unknown, now: number): Promise<Mapped[]> {
  switch (reading.kind) {
    case 'refused':
      return [{ refused: reading.problem }];
    case 'reports':
      return Promise.all(reading.reports.map((report) => mapReport(deps, report, now)));
    case 'direct':
      // Ours already, and routed to probe-members: taking it here would publish it again, for ever.
      if ((raw as { 'detail-type'?: unknown; source?: unknown })['detail-type'] !== undefined && (raw as { source?: unknown }).source === EVENT_SOURCE) {
        return [{ refused: `source: MemberUnhealthy from ${EVENT_SOURCE} is on the bus already; the intake takes reports from other sources` }];
      }
      return [await mapDirect(deps, reading.detail, now)];
  }
}

/** One machine a signal names, to the member on it. */
async function mapReport(deps: IntakeDeps, report: SignalReport, now: number): Promise<Mapped> {
  const location = await lookup(deps, report.by, report.value);
  if (!location) return { refused: `${report.by} ${report.value} is not registered in the cluster directory: no etcd member is known to run on it` };
  return validated({
    clusterId: location.clusterId,
    attempt: 0,
    at: new Date(now).toISOString(),
    target: { memberName: location.memberName },
    reason: report.reason,
    source: report.source,
    observedAt: report.observedAt,
  });
}

/**
 * A MemberUnhealthy sent to the intake: a machine named by instance id or node name is mapped to
 * its member, and may leave out the cluster; any other target needs the cluster, which must exist.
 */
async function mapDirect(deps: IntakeDeps, detail: unknown, now: number): Promise<Mapped> {
  // Reserved keys, values JSON cannot carry and size first: the schema would strip or drop them unsaid.
  const unfit = inputIssues(detail);
  if (unfit.length > 0) return { refused: `MemberUnhealthy is invalid: ${unfit.map((i) => `${i.path}: ${i.problem}`).join('; ')}` };
  const parsed = directReportSchema.safeParse(detail);
  if (!parsed.success) return { refused: `MemberUnhealthy is invalid: ${describeIssues(parsed.error.issues)}` };
  const report = parsed.data;
  const machine = report.target.instanceId !== undefined ? ('instanceId' as const) : report.target.nodeName !== undefined ? ('nodeName' as const) : undefined;
  const location = machine ? await lookup(deps, machine, report.target[machine]!) : undefined;
  const at = report.at ?? new Date(now).toISOString();
  if (machine && location) {
    if (report.clusterId !== undefined && report.clusterId !== location.clusterId) {
      return {
        refused: `MemberUnhealthy conflicts: ${machine} ${report.target[machine]} runs member ${location.memberName} of cluster ${location.clusterId}, not of ${report.clusterId}`,
      };
    }
    return validated({ ...report, at, clusterId: location.clusterId, target: { memberName: location.memberName } });
  }
  if (report.clusterId === undefined) {
    return machine
      ? { refused: `${machine} ${report.target[machine]} is not registered in the cluster directory, and the report names no clusterId` }
      : { refused: 'MemberUnhealthy is invalid: clusterId: is required unless the target is an instanceId or nodeName the directory knows' };
  }
  // Not registered but the cluster is named: the probe resolves it through the cluster's aliases.
  const unknown = await unknownCluster(deps, report.clusterId);
  if (unknown) return { refused: `MemberUnhealthy is invalid: clusterId: ${unknown}` };
  return validated({ ...report, at, clusterId: report.clusterId });
}

function lookup(deps: IntakeDeps, by: SignalReport['by'], value: string): Promise<MemberLocation | undefined> {
  return by === 'instanceId' ? deps.directory.findByInstance(value) : deps.directory.findByNode(value);
}

async function unknownCluster(deps: IntakeDeps, clusterId: string): Promise<string | undefined> {
  return (await deps.directory.isRegistered(clusterId)) ? undefined : new UnknownClusterError(clusterId).message;
}

/** Checked against the catalogue, as the bus would: what the intake builds is what probe-members takes. */
function validated(detail: unknown): Mapped {
  const checked = parseEvent('MemberUnhealthy', detail);
  if (!checked.ok) return { refused: checked.error.summary };
  return { detail: checked.event.detail as DetailOf<'MemberUnhealthy'> };
}

/** Two machines of one signal that map to one member make one report. */
const distinct = (details: DetailOf<'MemberUnhealthy'>[]): DetailOf<'MemberUnhealthy'>[] => {
  const seen = new Set<string>();
  return details.filter((d) => {
    const key = `${d.clusterId}\n${JSON.stringify(d.target)}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
};

async function deadLetter(deps: IntakeDeps, raw: unknown, signal: string, error: string, now: number): Promise<{ id: string; error: string }> {
  const dead = await deps.store.putDeadLetter({
    receivedAt: now,
    source: INTAKE_SOURCE,
    detailType: signal,
    payload: payloadOf(raw),
    error,
  });
  deps.log.error('intake: signal refused, kept as a dead letter', { signal, error, deadLetterId: dead.id });
  return { id: dead.id, error };
}
