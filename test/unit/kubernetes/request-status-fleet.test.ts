// A request held by the fleet's gates: Waiting (the CRD's phase for a scheduled retry), with the
// gate's reason code and its words (who paused, when, why and how to resume; a storm's figures),
// as the incident reads, while it waits and after a restart alike.
import { describe, expect, it } from 'vitest';
import { pausedStep } from '../../../functions/core/fleet/fleet-gate.ts';
import { parsePolicy } from '../../../functions/core/policy/policy.ts';
import type { Incident } from '../../../functions/ports/incident-store.ts';
import { statusOfIncident } from '../../../infra/kubernetes/request-status.ts';

const paused = pausedStep(
  { clusters: { 'ns/wl': { by: 'ops@box', at: 1_000, why: 'control plane upgrade' } } },
  { clusterId: 'ns/wl', openedAt: 1_000, now: 2_000, policy: parsePolicy() },
  { kind: 'approve', reason: 'TARGET_IS_FOLLOWER', message: 'remove etcd-1', evidence: {} },
)!;

describe('a request held by a pause', () => {
  it('an open incident whose last decision is PAUSED shows Waiting, PAUSED and who, when, why', () => {
    const incident = { incidentId: 'i-1', state: 'open', openedAt: 1_000, lastDecision: paused } as Pick<
      Incident,
      'incidentId' | 'state' | 'openedAt' | 'lastDecision'
    >;
    expect(statusOfIncident(incident as Incident)).toMatchObject({ phase: 'Waiting', reasonCode: 'PAUSED', message: paused.message });
    expect(paused.message).toMatch(/paused by ops@box since .*control plane upgrade.*resume --cluster ns\/wl/);
  });
});
