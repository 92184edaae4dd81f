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

  it('force-new-cluster on the survivor, then each other member added back through it, one at a time, in exact commands', () => {
    const plan = recoveryPlan({ ...base, tls: { cacert: '/pki/ca.crt', cert: '/pki/c.crt', key: '/pki/c key' } });
    expect(plan.survivor).toMatchObject({ name: 'etcd-0', appliedIndex: 200 });
    expect(plan.summary).toMatch(
      /^etcd-0 holds the most recent data .*applied index 200.*--force-new-cluster.*nothing runs them for you.*no snapshot of it was kept here/,
    );
    const whats = plan.steps.map((s) => s.what);
    expect(whats[0]).toMatch(/^Stop etcd on every member still running \(etcd-0\)/);
    expect(whats.findIndex((w) => /--force-new-cluster added/.test(w))).toBeLessThan(whats.findIndex((w) => /^Remove --force-new-cluster/.test(w)));
    const adds = plan.steps.flatMap((s) => s.commands).filter((c) => / member add /.test(c.run));
    expect(adds.map((c) => c.run)).toEqual([
      `etcdctl --endpoints=http://127.0.0.1:4001 --cacert=/pki/ca.crt --cert=/pki/c.crt --key='/pki/c key' member add etcd-1 --peer-urls=http://127.0.0.1:4012`,
      `etcdctl --endpoints=http://127.0.0.1:4001 --cacert=/pki/ca.crt --cert=/pki/c.crt --key='/pki/c key' member add etcd-2 --peer-urls=http://127.0.0.1:4022`,
    ]);
    expect(adds.every((c) => c.on === 'anywhere')).toBe(true);
  });

  it('with a snapshot kept: named with its size, SHA-256 and age, and its restore offered only if the survivor data cannot be used', () => {
    const plan = recoveryPlan({ ...base, snapshot: SNAPSHOT });
    expect(plan.summary).toMatch(
      /newest snapshot kept is \/var\/snap\/c\/i-1-etcd-1\.db \(4096 bytes, SHA-256 (ab){32}, 60 s old\), older than the survivor's data/,
    );
    const last = plan.steps.at(-1)!;
    expect(last.what).toMatch(/^Only if etcd-0's data cannot be used/);
    expect(last.commands.map((c) => c.run)).toEqual([
      'sha256sum /var/snap/c/i-1-etcd-1.db',
      'etcdctl snapshot restore /var/snap/c/i-1-etcd-1.db --name etcd-0 --initial-cluster etcd-0=http://127.0.0.1:4002 --initial-advertise-peer-urls http://127.0.0.1:4002 --data-dir NEW_DATA_DIR',
    ]);
  });

  it.each([
    ['3.4.30', 'etcdctl snapshot restore'],
    ['3.5.17', 'etcdutl snapshot restore'],
    ['3.6.0', 'etcdutl snapshot restore'],
  ])('etcd %s: the snapshot is restored with %s', (version, tool) => {
    const plan = recoveryPlan({ ...base, members: withVersion(members(lost), version), snapshot: SNAPSHOT });
    expect(plan.steps.at(-1)!.commands[1]!.run.startsWith(tool)).toBe(true);
  });

  it("kubeadm: its manifest moved away and back on the member's node, its data copied, its certificates, and kubeadm join to add the others back", () => {
    const plan = recoveryPlan({ ...base, deployment: 'kubeadm' });
    const commands = plan.steps.flatMap((s) => s.commands);
    expect(commands).toContainEqual({ run: `mv ${KUBEADM.manifest} ${KUBEADM.stopped}`, on: { host: 'etcd-0' } });
    expect(commands).toContainEqual({ run: `cp -a ${KUBEADM.dataDir} ${KUBEADM.dataDir}.before-recovery`, on: { host: 'etcd-0' } });
    expect(commands.find((c) => / endpoint status /.test(c.run))?.run).toBe(
      `etcdctl --endpoints=http://127.0.0.1:4001 --cacert=${KUBEADM.cacert} --cert=${KUBEADM.cert} --key=${KUBEADM.key} endpoint status -w table`,
    );
    expect(plan.steps.at(-1)!.what).toMatch(/kubeadm join --control-plane .*Cluster API: delete its Machine/);
  });

  it('no member answers: only the snapshot, restored on a member, the others added back; with none, no step at all and the warning', () => {
    const none = members([
      { i: 0, paths: 'refused' },
      { i: 1, paths: 'refused' },
      { i: 2, paths: 'timeout' },
    ]);
    const fromSnapshot = recoveryPlan({ ...base, members: none, snapshot: SNAPSHOT });
    expect(fromSnapshot.survivor).toBeUndefined();
    expect(fromSnapshot.summary).toMatch(/^No member answered its status.*newest snapshot kept is/);
    expect(fromSnapshot.steps.flatMap((s) => s.commands).some((c) => / snapshot restore /.test(` ${c.run}`))).toBe(true);
    const nothing = recoveryPlan({ ...base, members: none });
    expect(nothing.steps).toEqual([]);
    expect(nothing.summary).toMatch(/no snapshot of it was kept here\. Never run --force-new-cluster on a member that may not hold the newest data\./);
  });
});
