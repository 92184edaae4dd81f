// Plain-words fragments shared by every message, so members and paths read the same everywhere.
import { memberAlarms, type MemberView } from './view.ts';
import type { EtcdFailure, PathName, PathProbe, Reachability } from '../common/index.ts';

const howItFailed: Record<Exclude<Reachability, 'ok'>, string> = {
  refused: 'refused',
  timeout: 'timed out',
  tls: 'failed the TLS handshake',
  auth: 'rejected our credentials',
  other: 'failed',
};

/** "refused"; for TLS, auth and other failures also what was said, e.g. "failed: socket hang up". */
export function describeFailure(f: EtcdFailure, path?: PathName): string {
  const how = howItFailed[f.kind];
  // A socket error adds nothing to "refused" or "timed out"; an etcd message always does, and so
  // does a kube path's, which says what the API server answered (kubelet or containerd down).
  const plainSocket = (f.kind === 'refused' || f.kind === 'timeout') && !f.message.startsWith('etcdserver:') && (path === undefined || path === 'direct');
  return f.message && !plainSocket ? `${how}: ${f.message}` : how;
}

/** e.g. "direct http://127.0.0.1:4001 refused". */
export function describePath(p: Pick<PathProbe, 'path' | 'endpoint' | 'reachability' | 'failure'>): string {
  const where = p.endpoint ? `${p.path} ${p.endpoint}` : p.path;
  if (p.reachability === 'ok') return `${where} answered`;
  return `${where} ${p.failure ? describeFailure(p.failure, p.path) : howItFailed[p.reachability]}`;
}

export const describePaths = (paths: PathProbe[]): string => (paths.length === 0 ? 'no path was probed' : paths.map(describePath).join(', '));

/** Why a member does not count as healthy, in a few words; undefined when it is healthy. */
export function whyUnhealthy(m: MemberView): string | undefined {
  if (m.healthy) return undefined;
  if (!m.started) return 'was added but never started';
  if (!m.reachable) return `is unreachable on every path (${describePaths(m.paths)})`;
  if (!m.status) return 'answered without a status';
  const alarms = memberAlarms(m.status);
  if (alarms.length > 0) return `has alarm ${alarms.join(', ')}`;
  if (m.status.errors.length > 0) return `reports errors: ${m.status.errors.join('; ')}`;
  return 'is not healthy';
}

/** How the target was reached, for a sentence about it: "answers on direct …" or why it did not. */
export function howReached(m: MemberView): string {
  const answered = m.paths.filter((p) => p.reachability === 'ok').map((p) => (p.endpoint ? `${p.path} ${p.endpoint}` : p.path));
  return answered.length > 0 ? `answers on ${listWords(answered)}` : `is unreachable on every path (${describePaths(m.paths)})`;
}

/** "etcd-1 (…) and etcd-2 (…)": a readable list. */
export function listWords(items: string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

/** Milliseconds as a short duration: "850 ms", "12 s", "5 min". */
export function describeDuration(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 120_000) return `${Math.round(ms / 100) / 10} s`;
  return `${Math.round(ms / 6_000) / 10} min`;
}

export const describeTime = (at: number): string => new Date(at).toISOString();

/** A sentence said as a clause inside another: its first letter lowercase. */
export const lowerFirst = (text: string): string => `${text.charAt(0).toLowerCase()}${text.slice(1)}`;
