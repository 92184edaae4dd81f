// The recovery plan of a cluster that lost quorum, pure: who holds the most recent data, which tool
// restores a snapshot for the etcd version, the commands for kubeadm's files or for the endpoints
// and certificates given, and never a plan that runs anything itself.
import { describe, expect, it } from 'vitest';
import { KUBEADM, recoveryPlan, survivorOf, type RecoveryInput } from '../../../../functions/core/recovery/index.ts';
import type { ClusterView } from '../../../../functions/core/view/index.ts';
import { view, type MemberSpec } from '../fixtures.ts';

const members = (specs: MemberSpec[]): ClusterView['members'] => view(1_000, specs).members;
const withVersion = (ms: ClusterView['members'], version: string): ClusterView['members'] =>
  ms.map((m) => (m.status ? { ...m, status: { ...m.status, version } } : m));
const SNAPSHOT = { location: '/var/snap/c/i-1-etcd-1.db', bytes: 4096, sha256: 'ab'.repeat(32), takenAt: 1_000 };

describe('who holds the most recent data', () => {
  it.each([
    [
      'the highest term first',
      [
        { i: 0, paths: 'refused' },
        { i: 1, term: 3, applied: 50 },
        { i: 2, term: 4, applied: 10 },
      ],
      'etcd-2',
    ],
    [
      'then the highest applied index',
      [
        { i: 0, paths: 'refused' },
        { i: 1, applied: 120 },
        { i: 2, applied: 119 },
      ],
      'etcd-1',
    ],
    [
      'never a member whose own alarm says its data is corrupt',
      [
        { i: 0, paths: 'refused' },
        { i: 1, applied: 999, alarms: ['CORRUPT'] },
        { i: 2, applied: 5 },
      ],
      'etcd-2',
    ],
    [
      'a NOSPACE alarm is no reason to pass a member over',
      [
        { i: 0, paths: 'refused' },
        { i: 1, applied: 999, alarms: ['NOSPACE'] },
        { i: 2, applied: 5 },
      ],
      'etcd-1',
    ],
    [
      'never a learner',
      [
        { i: 0, paths: 'refused' },
        { i: 1, learner: true, applied: 999 },
        { i: 2, applied: 5 },
      ],
      'etcd-2',
    ],
  ] as const)('%s', (_name, specs, survivor) => {
    expect(survivorOf(members([...specs] as MemberSpec[]))?.name).toBe(survivor);
  });

  it('none when no member answered', () => {
    expect(
      survivorOf(
        members([
          { i: 0, paths: 'refused' },
          { i: 1, paths: 'timeout' },
        ]),
      ),
    ).toBeUndefined();
  });
});

describe('the plan', () => {
  const lost: MemberSpec[] = [
    { i: 0, applied: 200 },
    { i: 1, paths: 'refused' },
    { i: 2, paths: 'timeout' },
  ];
  const base: RecoveryInput = { members: members(lost), deployment: 'unknown', now: 61_000 };
  const INITIAL = 'etcd-0=http://127.0.0.1:4002,etcd-1=http://127.0.0.1:4012,etcd-2=http://127.0.0.1:4022';

  it('a snapshot saved from the survivor, restored on every member into a new data directory, every member started on it, in exact commands', () => {
    const plan = recoveryPlan({ ...base, tls: { cacert: '/pki/ca.crt', cert: '/pki/c.crt', key: '/pki/c key' } });
    expect(plan.survivor).toMatchObject({ name: 'etcd-0', appliedIndex: 200 });
    expect(plan.summary).toMatch(
      /^etcd-0 holds the most recent data .*applied index 200.*save a snapshot of it and restore that on every member.*nothing runs them for you.*no snapshot of it was kept here\.$/,
    );
    expect(plan.steps.map((s) => s.what.split(/[:,(]/)[0])).toEqual([
      'Save a snapshot of etcd-0',
      'Stop etcd on every member still running ',
      'Restore recovery.db on every member ',
      'Start every member on its restored data. On each',
      'Check that the 3 members are started and agree on a leader',
    ]);
    expect(plan.steps[0]!.commands).toEqual([
      { run: "etcdctl --endpoints=http://127.0.0.1:4001 --cacert=/pki/ca.crt --cert=/pki/c.crt --key='/pki/c key' snapshot save recovery.db", on: 'anywhere' },
      { run: 'etcdctl snapshot status recovery.db -w table', on: 'anywhere' },
    ]);
    expect(plan.steps[2]!.commands).toEqual(
      [0, 1, 2].map((i) => ({
        run: `etcdctl snapshot restore recovery.db --name etcd-${i} --initial-cluster ${INITIAL} --initial-advertise-peer-urls http://127.0.0.1:40${i}2 --data-dir etcd-${i}.restored`,
        on: { host: `etcd-${i}` },
      })),
    );
    expect(JSON.stringify(plan)).not.toMatch(/force-new-cluster/);
  });

  it('with a snapshot kept: named with its size, SHA-256 and age, as older than the survivor data', () => {
    const plan = recoveryPlan({ ...base, snapshot: SNAPSHOT });
    expect(plan.summary).toMatch(
      /newest snapshot kept is \/var\/snap\/c\/i-1-etcd-1\.db \(4096 bytes, SHA-256 (ab){32}, 60 s old\), older than the survivor's data\.$/,
    );
    expect(plan.snapshot).toMatchObject({ ageMs: 60_000 });
  });

  it.each([
    ['3.4.30', 'etcdctl'],
    ['3.5.17', 'etcdutl'],
    ['3.6.0', 'etcdutl'],
  ])('etcd %s: the snapshot is checked and restored with %s', (version, tool) => {
    const plan = recoveryPlan({ ...base, members: withVersion(members(lost), version) });
    expect(plan.steps[0]!.commands[1]!.run).toBe(`${tool} snapshot status recovery.db -w table`);
    expect(plan.steps[2]!.commands.every((c) => c.run.startsWith(`${tool} snapshot restore `))).toBe(true);
  });

  it("kubeadm: its manifest moved away on each member's node, its certificates, the restore into /var/lib/etcd-restored and the hostPath pointed at it", () => {
    const plan = recoveryPlan({ ...base, deployment: 'kubeadm' });
    const commands = plan.steps.flatMap((s) => s.commands);
    expect(commands).toContainEqual({ run: `mv ${KUBEADM.manifest} ${KUBEADM.stopped}`, on: { host: 'etcd-0' } });
    expect(plan.steps[0]!.commands[0]!.run).toBe(
      `etcdctl --endpoints=http://127.0.0.1:4001 --cacert=${KUBEADM.cacert} --cert=${KUBEADM.cert} --key=${KUBEADM.key} snapshot save recovery.db`,
    );
    expect(commands.filter((c) => / snapshot restore /.test(c.run)).every((c) => c.run.endsWith(`--data-dir ${KUBEADM.dataDir}-restored`))).toBe(true);
    expect(plan.steps[3]!.what).toMatch(/etcd-data hostPath in \/etc\/kubernetes\/etcd\.yaml\.stopped at \/var\/lib\/etcd-restored/);
  });

  it('no member answers: the kept snapshot, its SHA-256 checked, restored on every member; with none, no step at all', () => {
    const none = members([
      { i: 0, paths: 'refused' },
      { i: 1, paths: 'refused' },
      { i: 2, paths: 'timeout' },
    ]);
    const fromKept = recoveryPlan({ ...base, members: none, snapshot: SNAPSHOT });
    expect(fromKept.survivor).toBeUndefined();
    expect(fromKept.summary).toMatch(
      /^No member answered its status, so none holds data to save; the newest snapshot kept is .* it loses what was written after it\.$/,
    );
    expect(fromKept.steps[0]!.commands).toEqual([{ run: 'sha256sum /var/snap/c/i-1-etcd-1.db', on: { host: 'the machine that keeps it' } }]);
    expect(fromKept.steps.flatMap((s) => s.commands).filter((c) => c.run.includes(' snapshot restore /var/snap/c/i-1-etcd-1.db '))).toHaveLength(3);
    const nothing = recoveryPlan({ ...base, members: none });
    expect(nothing.steps).toEqual([]);
    expect(nothing.summary).toMatch(/no snapshot of it was kept here\.$/);
  });
});
