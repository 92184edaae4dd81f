// Replaces the machine behind a removed etcd member (CAPI Machine delete, EC2 replace, or nothing).
import type { MemberInfo } from '../core/common/index.ts';

export interface ReplaceRequest {
  clusterId: string;
  incidentId: string;
  member: Pick<MemberInfo, 'id' | 'name'>;
  /** The original selector from MemberUnhealthy: nodeName, machineName, instanceId … */
  target: Record<string, string>;
  /**
   * The Machine the incident's probes placed the member on, by uid, when they saw one: only that
   * Machine is replaced, never another that took its name since.
   */
  machine?: { name: string; uid: string };
  /** Aborted when the policy's actuatorTimeoutMs runs out; the call is then taken as failed. */
  signal?: AbortSignal;
}

export interface ReplaceResult {
  action: 'none' | 'deleted' | 'replaced';
  detail: string;
}

export interface Actuator {
  readonly name: string;
  /**
   * Idempotent per incidentId: a redelivered step may ask twice (the call succeeded, the write
   * recording it did not), and a machine that is already gone counts as replaced.
   */
  replace(request: ReplaceRequest): Promise<ReplaceResult>;
}
