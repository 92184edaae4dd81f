// An endpoint with credentials in it is refused in any event that carries endpoints and in a
// cluster registration, naming the field and never quoting the password.
import { describe, expect, it } from 'vitest';
import { parseEvent } from '../../../events/validate.ts';
import { checkRegistration, ClusterRegistrationError } from '../../../functions/adapters/aws/cluster-registration.ts';
import { carriesCredentials, withoutCredentials } from '../../../functions/core/common/endpoint-url.ts';
import { loadSample } from './samples.ts';

const PASSWORD = 'S3cretPw';
const LEAKY = `https://root:${PASSWORD}@10.0.1.10:2379`;

describe('carriesCredentials and withoutCredentials', () => {
  it.each([
    { endpoint: LEAKY, leaks: true, shown: 'https://***@10.0.1.10:2379' },
    { endpoint: 'http://root@10.0.1.10:2379', leaks: true, shown: 'http://***@10.0.1.10:2379' },
    { endpoint: `root:${PASSWORD}@10.0.1.10:2379`, leaks: true, shown: '***@10.0.1.10:2379' },
    { endpoint: `http://a:p@ss@10.0.1.10:2379/x`, leaks: true, shown: 'http://***@10.0.1.10:2379/x' },
    { endpoint: 'https://10.0.1.10:2379', leaks: false, shown: 'https://10.0.1.10:2379' },
    { endpoint: 'https://10.0.1.10:2379/path@not-user-info', leaks: false, shown: 'https://10.0.1.10:2379/path@not-user-info' },
    { endpoint: 'kube-system/etcd-cp-2:2379', leaks: false, shown: 'kube-system/etcd-cp-2:2379' },
    { endpoint: 'https://10.0.0.12:2379 via kube-system/etcd-cp-1', leaks: false, shown: 'https://10.0.0.12:2379 via kube-system/etcd-cp-1' },
  ])('$endpoint', ({ endpoint, leaks, shown }) => {
    expect(carriesCredentials(endpoint)).toBe(leaks);
    expect(withoutCredentials(endpoint)).toBe(shown);
  });
});

describe('events refuse endpoints with credentials', () => {
  const probed = loadSample('MembersProbed');
  const leakyAt = (edit: (view: typeof probed.view) => void) => {
    const detail = structuredClone(probed);
    edit(detail.view);
    return detail;
  };
  it.each([
    { field: 'view.members[0].clientUrls[0]', edit: (v: typeof probed.view) => void (v.members[0]!.clientUrls[0] = LEAKY) },
    { field: 'view.members[0].peerUrls[0]', edit: (v: typeof probed.view) => void (v.members[0]!.peerUrls[0] = LEAKY) },
    { field: 'view.members[0].paths[0].endpoint', edit: (v: typeof probed.view) => void (v.members[0]!.paths[0]!.endpoint = LEAKY) },
    { field: 'view.identity.reports[0].endpoint', edit: (v: typeof probed.view) => void (v.identity!.reports[0]!.endpoint = LEAKY) },
  ])('MembersProbed: $field', ({ field, edit }) => {
    expect(parseEvent('MembersProbed', probed).ok).toBe(true);
    const parsed = parseEvent('MembersProbed', leakyAt(edit));
    if (parsed.ok) throw new Error('expected a refusal');
    expect(parsed.error.issues).toEqual([{ path: field, problem: expect.stringContaining('carries credentials') }]);
    expect(parsed.error.summary).not.toContain(PASSWORD);
  });
});

describe('a cluster registration refuses endpoints with credentials', () => {
  it('names the field, not the password', () => {
    expect(() => checkRegistration({ clusterId: 'prod', endpoints: ['https://10.0.1.11:2379'] })).not.toThrow();
    let error: unknown;
    try {
      checkRegistration({ clusterId: 'prod', endpoints: ['https://10.0.1.11:2379', LEAKY] }, 'prod');
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ClusterRegistrationError);
    expect((error as Error).message).toContain('cluster prod: endpoints.1: carries credentials');
    expect((error as Error).message).not.toContain(PASSWORD);
  });
});
