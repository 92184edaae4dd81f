// How large a cluster view may grow: every text and list it carries has a limit here, the one the
// MembersProbed schema holds events to and the store's views obey. Texts are measured in bytes of
// their JSON text (UTF-8, escapes included), so a limit bounds the serialized size whatever the
// characters. Pure.
import { PATH_NAMES } from './types.ts';

export const VIEW_LIMITS = {
  /** Members a view holds: etcd advises at most seven voters; a rollout's surge member and a learner come on top. */
  members: 9,
  /** Control-plane Machines: one per member, and a stuck deletion's besides. */
  machines: 11,
  /** One probe per path and member. */
  paths: PATH_NAMES.length,
  /** A member's client URLs, and its peer URLs (only the first client URL is dialled; kubeadm advertises one). */
  urls: 2,
  alarms: 4,
  errors: 4,
  /** Seeds that said which cluster they belong to, and the distinct ids among them (two already mismatch). */
  identityReports: 4,
  identityIds: 4,
  /** Seeds that gave no member list. */
  listFailures: 12,
} as const;

export const TEXT_LIMITS = {
  /** A member's, Node's or Machine's name: Kubernetes object names are DNS subdomains. */
  name: 253,
  /** `namespace/name` of a pod. */
  pod: 317,
  /** `https://<a 253-byte host>:port`. */
  url: 272,
  /** `URL via namespace/pod`, the relay's, is the longest form. */
  endpoint: 600,
  /** A path's failure, or why the kube paths were not looked up. */
  message: 384,
  /** One of a member's status errors, e.g. `etcdserver: mvcc: database space exceeded`. */
  statusError: 128,
  /** An alarm type: NOSPACE, CORRUPT. */
  alarm: 16,
  version: 32,
} as const;

const encoder = new TextEncoder();

/** The bytes `value` takes as JSON text (UTF-8). */
export const jsonSize = (value: unknown): number => encoder.encode(JSON.stringify(value)).length;

/** The bytes `text` takes in a JSON document, quotes aside. */
export const jsonBytes = (text: string): number => jsonSize(text) - 2;

/** The most a UTF-16 unit takes as JSON text: a control character or lone surrogate is `\uXXXX`. */
const MAX_UNIT_BYTES = 6;
const ELLIPSIS = '…';

/** `text`, cut to at most `max` JSON bytes; a cut ends in an ellipsis, so it reads as cut. */
export function clipText(text: string, max: number): string {
  if (text.length * MAX_UNIT_BYTES <= max || jsonBytes(text) <= max) return text;
  let room = max - jsonBytes(ELLIPSIS);
  let kept = '';
  // Code points, not units: a surrogate pair is never split.
  for (const char of text.slice(0, max)) {
    room -= jsonBytes(char);
    if (room < 0) break;
    kept += char;
  }
  return kept + ELLIPSIS;
}

export const clipAll = (texts: readonly string[], count: number, max: number): string[] => texts.slice(0, count).map((t) => clipText(t, max));
