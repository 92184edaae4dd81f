// Kubernetes Events on the objects decisions concern, written as client-go's recorder writes them
// (tools/record): a core/v1 Event in the object's namespace, named <object>.<nanoseconds>, count 1;
// the same object, type, reason and message again is the same Event, its count and last timestamp
// raised by a PATCH (EventCorrelator), created anew if it is gone. The events.k8s.io fields ride
// along (eventTime, reportingComponent, reportingInstance, action, series once it repeats), so the
// API server holds the note to its 1 kB limit. Writing an Event never holds up nor fails a
// remediation: one writer in the background, a few tries on errors worth trying again, a token
// bucket per object against a flood of waiting's Events (EventSourceObjectSpamFilter's idea; the
// decisions that move an incident on always pass), and failures only logged.
import { setTimeout as sleep } from 'node:timers/promises';
import { handleWhen, retry } from 'cockatiel';
import { PatchStrategy, setHeaderOptions, V1MicroTime, type CoreV1Api, type CoreV1Event, type CustomObjectsApi } from '@kubernetes/client-node';
import { doublingBackoff } from '../../../lib/doubling-backoff.ts';
import { setNewest } from '../../../core/common/index.ts';
import {
  conditionReason,
  eventKey,
  eventName,
  nanosOf,
  spamFilter,
  WAITING_ACTIONS,
  type InvolvedObject,
  type ObjectEventSaid,
  type SpamFilterOptions,
} from '../../../core/kubernetes/index.ts';
import type { Log } from '../../../ports/log.ts';
import { describeKubeError, isNotFound } from '../api-errors.ts';
import type { RemediationRequest } from './remediation-requests.ts';
import { CAPI_GROUP, createMachineReader, type MachineApiVersion } from './machines.ts';

/** client-go's reporting component for our Events. */
export const EVENT_COMPONENT = 'etcd-remediator';

export interface EventRecorderOptions {
  core: CoreV1Api;
  log: Log;
  clock: { now(): number };
  /** reportingInstance and source.host: who wrote the Event (the watcher's host or pod). */
  instance: string;
  /** client-go's default: a burst of 25 per object, then one every 5 minutes. */
  spam?: SpamFilterOptions;
  /** Tries per write, the first delay doubling between them (default 3 tries from 200 ms). */
  tries?: number;
  firstDelayMs?: number;
  /** How many Events are remembered to be counted again (client-go: 4096). */
  remembered?: number;
}

export interface EventRecorder {
  /** Queues the Event; never throws. */
  record(object: InvolvedObject, said: ObjectEventSaid): void;
  /** Resolves once every Event queued so far is written or given up, or after `withinMs` at most. */
  flush(withinMs?: number): Promise<void>;
}

interface Seen {
  name: string;
  namespace: string;
  count: number;
  firstTimestamp: string;
}

/** metav1.Time on the wire: RFC 3339 in whole seconds. */
const wireTime = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** client-node types metav1.Time as a Date, which it writes with milliseconds; a string goes as it is. */
const asTime = (wire: string): Date => wire as unknown as Date;

/** A status code worth another try: the server's own trouble or its rate limit; anything else is final. */
function retryable(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code !== 'number' || code === 429 || code >= 500;
}

/** The Event's namespace: the object's, or default for a cluster-scoped one (a Node), as client-go puts it. */
const namespaceOf = (object: InvolvedObject): string => object.namespace || 'default';
/** The object as a log line names it: `Machine ns/name`, or `Node name` for a cluster-scoped one. */
const shownObject = (object: InvolvedObject): string => `${object.kind} ${object.namespace ? `${object.namespace}/` : ''}${object.name}`;

export function createEventRecorder(options: EventRecorderOptions): EventRecorder {
  const { core, log, clock, instance } = options;
  const filter = spamFilter(options.spam ?? { burst: 25, refillEveryMs: 300_000 });
  const tries = options.tries ?? 3;
  const firstDelayMs = options.firstDelayMs ?? 200;
  const remembered = options.remembered ?? 4_096;
  const seen = new Map<string, Seen>();
  let lastNanos = 0n;
  let queue: Promise<void> = Promise.resolve();

  async function create(object: InvolvedObject, said: ObjectEventSaid, now: number, count: number, firstTimestamp: string): Promise<Seen> {
    const nanos = nanosOf(now) > lastNanos ? nanosOf(now) : lastNanos + 1n;
    lastNanos = nanos;
    const namespace = namespaceOf(object);
    const body: CoreV1Event = {
      metadata: { name: eventName(object.name, nanos), namespace },
      involvedObject: {
        kind: object.kind,
        apiVersion: object.apiVersion,
        name: object.name,
        ...(object.namespace ? { namespace: object.namespace } : {}),
        ...(object.uid ? { uid: object.uid } : {}),
      },
      // Kubernetes' Event reasons are UpperCamelCase (FailedScheduling), as our conditions' are: LEADER_MOVED is LeaderMoved.
      reason: conditionReason(said.reason),
      message: said.note,
      type: said.type,
      action: said.action,
      count,
      firstTimestamp: asTime(firstTimestamp),
      lastTimestamp: asTime(wireTime(now)),
      eventTime: new V1MicroTime(now),
      source: { component: EVENT_COMPONENT, host: instance },
      reportingComponent: EVENT_COMPONENT,
      reportingInstance: instance,
    };
    const created = await core.createNamespacedEvent({ namespace, body });
    return { name: created.metadata.name ?? body.metadata.name!, namespace, count, firstTimestamp };
  }

  /** Counted again: count and the last timestamps raised (the series, as events.k8s.io keeps it). */
  async function countAgain(previous: Seen, now: number): Promise<Seen> {
    const count = previous.count + 1;
    const body = { count, lastTimestamp: wireTime(now), series: { count, lastObservedTime: new V1MicroTime(now).toISOString() } };
    await core.patchNamespacedEvent({ namespace: previous.namespace, name: previous.name, body }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    return { ...previous, count };
  }

  // A few tries on the server's own trouble, the first delay doubling between them (cockatiel, as elsewhere).
  const tried = retry(handleWhen(retryable), { maxAttempts: tries - 1, backoff: doublingBackoff(firstDelayMs, Infinity) });

  async function write(object: InvolvedObject, said: ObjectEventSaid): Promise<void> {
    const key = eventKey(object, said);
    let attempts = 0;
    try {
      await tried.execute(async () => {
        attempts++;
        const now = clock.now();
        const previous = seen.get(key);
        let written: Seen;
        try {
          written = previous ? await countAgain(previous, now) : await create(object, said, now, 1, wireTime(now));
        } catch (error) {
          // Gone (expired after its hour, or deleted): written anew, its count kept.
          if (!previous || !isNotFound(error)) throw error;
          written = await create(object, said, now, previous.count + 1, previous.firstTimestamp);
        }
        setNewest(seen, key, written, remembered);
      });
    } catch (error) {
      log.warn('Kubernetes Event not written; the remediation goes on', {
        object: shownObject(object),
        reason: said.reason,
        tries: attempts,
        error: describeKubeError(error).split('\n')[0],
      });
    }
  }

  return {
    record(object, said) {
      if (WAITING_ACTIONS.includes(said.action) && !filter.allow(JSON.stringify([object.kind, object.namespace, object.name, object.uid ?? '']), clock.now())) {
        log.debug('Kubernetes Event dropped: too many for this object (spam filter)', { object: shownObject(object), reason: said.reason });
        return;
      }
      queue = queue.then(() => write(object, said)).catch(() => undefined);
    },
    flush: (withinMs = Infinity) => (withinMs === Infinity ? queue : Promise.race([queue, sleep(withinMs, undefined, { ref: false })])),
  };
}

/**
 * The Machine a request's Events go on (MHC names the request after it, in its namespace): its uid
 * from the request's owner reference, or read once; without it when the Machine cannot be read
 * (kubectl describe finds an object's Events by its uid too, so it is looked for).
 */
export async function machineReference(
  customObjects: CustomObjectsApi,
  request: Pick<RemediationRequest, 'namespace' | 'machineName' | 'clusterName' | 'machineOwner'>,
  version: MachineApiVersion,
): Promise<InvolvedObject> {
  const base = { kind: 'Machine', namespace: request.namespace, name: request.machineName };
  if (request.machineOwner) return { ...base, ...request.machineOwner };
  const apiVersion = `${CAPI_GROUP}/${version}`;
  const machine = await createMachineReader({ customObjects, clusterName: request.clusterName ?? '', version })
    .machineByName(request.namespace, request.machineName)
    .catch(() => undefined);
  return { ...base, apiVersion, ...(machine?.uid ? { uid: machine.uid } : {}) };
}
