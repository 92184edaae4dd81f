// A request's status is read back as the remediator wrote it, and only so: an incident id there
// that is not in the shape ids are made in was not written by us, and is not followed.
import { describe, expect, it } from 'vitest';
import { toRemediationRequest, type RequestObject } from '../../../../functions/adapters/kube/cluster-api/remediation-requests.ts';
import { testIncidentId } from '../../../support/incident-ids.ts';

const request = (status: Record<string, unknown>): RequestObject => ({
  apiVersion: 'etcd-remediator.io/v1alpha1',
  kind: 'EtcdRemediationRequest',
  metadata: { name: 'wl-cp-2', namespace: 'default', uid: 'u-1', labels: { 'cluster.x-k8s.io/cluster-name': 'wl' } },
  status,
});

describe('a request status read back', () => {
  it('keeps an incident id in the shape ids are made in', () => {
    expect(toRemediationRequest(request({ phase: 'Running', incidentId: testIncidentId(7) }))?.status).toEqual({
      phase: 'Running',
      incidentId: testIncidentId(7),
    });
  });

  it.each([
    ['a path', '../../x'],
    ['a made-up id', 'inc-1'],
    ['capitals', testIncidentId(0xabc).toUpperCase()],
    ['a number', 7],
  ])('leaves out %s, as if no incident were named', (_name, incidentId) => {
    expect(toRemediationRequest(request({ phase: 'Running', incidentId }))?.status).toEqual({ phase: 'Running' });
  });
});
