// Where an etcd pod serves plain /metrics, read from its command line as kubeadm writes it.
import { describe, expect, it } from 'vitest';
import { flagValue, plainMetricsPortOf } from '../../../../functions/adapters/kube/pod-flags.ts';

const kubeadm = [
  'etcd',
  '--advertise-client-urls=https://10.0.0.11:2379',
  '--listen-client-urls=https://127.0.0.1:2379,https://10.0.0.11:2379',
  '--listen-metrics-urls=http://127.0.0.1:2381',
  '--name=cp-1',
];

describe('plainMetricsPortOf', () => {
  it.each([
    { what: "kubeadm's static pod", containers: [{ name: 'etcd', command: kubeadm }], port: 2381 },
    {
      what: 'the flag in args, as two words',
      containers: [{ name: 'etcd', command: ['etcd'], args: ['--listen-metrics-urls', 'http://127.0.0.1:12381'] }],
      port: 12381,
    },
    {
      what: 'the first http URL, past an https one',
      containers: [{ name: 'etcd', command: ['etcd', '--listen-metrics-urls=https://10.0.0.11:2381,http://127.0.0.1:2382'] }],
      port: 2382,
    },
    {
      what: 'the etcd container, not a sidecar before it',
      containers: [
        { name: 'proxy', command: ['proxy', '--listen-metrics-urls=http://127.0.0.1:9000'] },
        { name: 'etcd', command: kubeadm },
      ],
      port: 2381,
    },
    {
      what: 'the last flag given, as etcd reads it',
      containers: [{ name: 'etcd', command: [...kubeadm, '--listen-metrics-urls=http://127.0.0.1:2399'] }],
      port: 2399,
    },
    { what: 'no flag', containers: [{ name: 'etcd', command: ['etcd', '--name=cp-1'] }], port: undefined },
    { what: 'https URLs only', containers: [{ name: 'etcd', command: ['etcd', '--listen-metrics-urls=https://127.0.0.1:2381'] }], port: undefined },
    { what: 'no command at all', containers: [{ name: 'etcd' }], port: undefined },
    { what: 'no containers', containers: undefined, port: undefined },
  ])('$what: $port', ({ containers, port }) => {
    expect(plainMetricsPortOf(containers)).toBe(port);
  });
});

describe('flagValue', () => {
  it('reads --flag=value and --flag value; a flag with nothing after it is none', () => {
    expect(flagValue(['--a=1', '--b', '2'], 'a')).toBe('1');
    expect(flagValue(['--a=1', '--b', '2'], 'b')).toBe('2');
    expect(flagValue(['--ab=1', '--b'], 'b')).toBeUndefined();
  });
});
