import { describe, expect, it } from 'vitest';
import { memberListArgv, memberRemoveArgv } from '../../../../functions/adapters/kube/exec-relay/exec-relay-members.ts';
import {
  endpointStatusArgv,
  KUBEADM_ETCD_TLS,
  KUBEADM_ETCDCTL,
  moveLeaderArgv,
  withApiV3Env,
} from '../../../../functions/adapters/kube/exec-relay/exec-relay-etcdctl.ts';

const call = { endpoint: 'https://10.0.0.12:2379', commandTimeoutMs: 1500, dialTimeoutMs: 800 };
const kubeadmFlags = [
  '/usr/local/bin/etcdctl',
  '--endpoints=https://10.0.0.12:2379',
  '--cacert=/etc/kubernetes/pki/etcd/ca.crt',
  '--cert=/etc/kubernetes/pki/etcd/healthcheck-client.crt',
  '--key=/etc/kubernetes/pki/etcd/healthcheck-client.key',
  '--dial-timeout=800ms',
  '--command-timeout=1500ms',
  '-w',
  'json',
];

describe('etcdctl relay argv', () => {
  it('probes the target with the etcdctl and certificates of kubeadm’s etcd image, by path', () => {
    expect(endpointStatusArgv(call)).toEqual([...kubeadmFlags, 'endpoint', 'status']);
    expect(KUBEADM_ETCDCTL).toBe('/usr/local/bin/etcdctl');
    expect(KUBEADM_ETCD_TLS.cacert).toBe('/etc/kubernetes/pki/etcd/ca.crt');
  });

  it('moves leadership to a hex member id', () => {
    expect(moveLeaderArgv(call, '8e9e05c52164694d')).toEqual([...kubeadmFlags, 'move-leader', '8e9e05c52164694d']);
  });

  it('drops the certificate flags for a plain-http member and takes another binary', () => {
    expect(endpointStatusArgv({ ...call, endpoint: 'http://127.0.0.1:2379', tls: null, binary: '/usr/bin/etcdctl' })).toEqual([
      '/usr/bin/etcdctl',
      '--endpoints=http://127.0.0.1:2379',
      '--dial-timeout=800ms',
      '--command-timeout=1500ms',
      '-w',
      'json',
      'endpoint',
      'status',
    ]);
  });

  it('sets ETCDCTL_API through env, not a shell, when asked', () => {
    expect(withApiV3Env(['etcdctl', 'endpoint', 'status'])).toEqual(['env', 'ETCDCTL_API=3', 'etcdctl', 'endpoint', 'status']);
  });

  it.each([
    ['two endpoints', { ...call, endpoint: 'https://a:2379,https://b:2379' }],
    ['no scheme', { ...call, endpoint: '10.0.0.12:2379' }],
    ['fractional timeout', { ...call, commandTimeoutMs: 1.5 }],
    ['zero dial timeout', { ...call, dialTimeoutMs: 0 }],
  ])('refuses %s', (_, bad) => {
    expect(() => endpointStatusArgv(bad)).toThrow(RangeError);
  });

  it('refuses a member id etcdctl could not parse', () => {
    expect(() => moveLeaderArgv(call, 'zz')).toThrow(RangeError);
    expect(() => moveLeaderArgv(call, '12345678901234567')).toThrow(RangeError);
  });
});

describe('membership argv', () => {
  it('lists and removes with the pod’s kubeadm certificates, JSON out', () => {
    expect(memberListArgv(call)).toEqual([...kubeadmFlags, 'member', 'list']);
    expect(memberRemoveArgv(call, '4979d004907b5b0b')).toEqual([...kubeadmFlags, 'member', 'remove', '4979d004907b5b0b']);
  });

  it('checks the endpoint as every relay call does', () => {
    expect(() => memberListArgv({ ...call, endpoint: 'https://a:2379,https://b:2379' })).toThrow(RangeError);
    expect(() => memberRemoveArgv({ ...call, dialTimeoutMs: 0 }, 'abc')).toThrow(RangeError);
  });

  it.each(['zz', 'ABCDEF', '', '12345678901234567', '-1', '4979d004907b5b0b\n', 'abc def'])(
    'refuses the member id %j: etcdctl reads hex with ParseUint',
    (id) => {
      expect(() => memberRemoveArgv(call, id)).toThrow(RangeError);
    },
  );
});
