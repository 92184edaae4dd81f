// Cluster identity: which etcd cluster a probe reached, and the planner's refusal to judge or
// remove anything across two clusters (CLUSTER_MISMATCH).
import { describe, expect, it } from 'vitest';
import { clusterIdOf, clusterMismatch, identityChanged, identityOf, isMismatched } from '../../../../functions/core/view/cluster-identity.ts';
import { plan, type PlanInput } from '../../../../functions/core/plan/plan.ts';
import type { ProbeSample } from '../../../../functions/core/common/types.ts';
import { buildClusterView, memberGone, type ClusterView } from '../../../../functions/core/view/view.ts';
import { cluster, endpointOf, FIXTURE_CLUSTER_ID, fixedRandom, id, policy, sample, view } from '../fixtures.ts';

const T0 = 600_000;
const OTHER = 'b0b0cafe';
const SEED_B = 'http://127.0.0.1:5001';

const planOn = (samples: ClusterView[], targetId = id(1), over: Partial<PlanInput['incident']> = {}) =>
  plan({
    samples,
    targetId,
    incident: { openedAt: T0 - 1_000, attempt: 0, immediateReprobes: 0, ...over },
    remediation: { retryCount: 0 },
    policy: policy({ electionTimeoutMs: 1_000 }),
    now: T0,
    random: fixedRandom(0.5),
  });

/** What the prober returns when seeds of two clusters answered: no member list, every seed's id. */
const seedsOfTwoClusters: ProbeSample = {
  at: T0,
  members: [],
  listFailures: [],
  seeds: [
    { endpoint: SEED_B, clusterId: OTHER },
    { endpoint: endpointOf(0), clusterId: FIXTURE_CLUSTER_ID },
    { endpoint: endpointOf(1), clusterId: FIXTURE_CLUSTER_ID },
  ],
};

describe('identityOf', () => {
  it('gives the one id when every seed and member agrees, and who said it once per endpoint', () => {
    const s = sample(T0, [
      { i: 0, leader: 0 },
      { i: 1, leader: 0 },
    ]);
    s.seeds = [{ endpoint: endpointOf(0), clusterId: FIXTURE_CLUSTER_ID }];
    s.listedBy = { endpoint: endpointOf(0), clusterId: FIXTURE_CLUSTER_ID };
    const identity = buildClusterView(s).identity;
    expect(identity).toEqual({
      id: FIXTURE_CLUSTER_ID,
      ids: [FIXTURE_CLUSTER_ID],
      reports: [
        { endpoint: endpointOf(0), clusterId: FIXTURE_CLUSTER_ID },
        { endpoint: endpointOf(1), clusterId: FIXTURE_CLUSTER_ID },
      ],
      listedBy: { endpoint: endpointOf(0), clusterId: FIXTURE_CLUSTER_ID },
    });
  });

  it('has no id, only the sorted ids, when members disagree', () => {
    const v = view(T0, [
      { i: 0, leader: 0 },
      { i: 1, leader: 0, clusterId: OTHER },
    ]);
    expect(v.identity?.id).toBeUndefined();
    expect(v.identity?.ids).toEqual([OTHER, FIXTURE_CLUSTER_ID].sort());
    expect(isMismatched(v)).toBe(true);
  });

  it('says nothing of members that did not answer, and has no id when nothing answered', () => {
    const s = sample(T0, [{ i: 0, paths: 'refused' }]);
    expect(identityOf(s, buildClusterView(s).members)).toEqual({ ids: [], reports: [] });
    expect(isMismatched(buildClusterView(s))).toBe(false);
  });
});

describe('CLUSTER_MISMATCH in the planner', () => {
  it('blocks when a member answers with another cluster_id, naming every endpoint, member and id', () => {
    const v = view(T0, [
      { i: 0, leader: 0 },
      { i: 1, leader: 0 },
      { i: 2, leader: 0, clusterId: OTHER },
    ]);
    const d = planOn([v]);
    expect(d).toMatchObject({
      kind: 'block',
      reason: 'CLUSTER_MISMATCH',
      evidence: { decidedBy: 'cluster-identity', clusterIds: [OTHER, FIXTURE_CLUSTER_ID].sort() },
    });
    expect(d.message).toContain(`${endpointOf(2)} (etcd-2) answered with cluster id ${OTHER}`);
    expect(d.message).toContain(`${endpointOf(0)} (etcd-0), ${endpointOf(1)} (etcd-1) answered with cluster id ${FIXTURE_CLUSTER_ID}`);
    expect(d.message).toMatch(/blocked, give the endpoints of one cluster only\.$/);
  });

  it('blocks on seeds of two clusters though no member list was taken, before any other check can call it unreachable', () => {
    const d = planOn([buildClusterView(seedsOfTwoClusters)]);
    expect(d).toMatchObject({ kind: 'block', reason: 'CLUSTER_MISMATCH', evidence: { decidedBy: 'cluster-identity' } });
    for (const endpoint of [SEED_B, endpointOf(0), endpointOf(1)]) expect(d.message).toContain(endpoint);
    expect(d.evidence.answeredWith).toEqual(seedsOfTwoClusters.seeds);
  });

  it('decides first: even an incident past its deadline is told the endpoints are wrong', () => {
    const v = view(T0, [
      { i: 0, leader: 0 },
      { i: 1, leader: 0, clusterId: OTHER },
    ]);
    expect(planOn([v], id(1), { openedAt: 0 }).reason).toBe('CLUSTER_MISMATCH');
  });

  it('passes one cluster, and views kept before ids were recorded', () => {
    expect(planOn([cluster(T0, 3, { leader: 0 })]).reason).toBe('TARGET_IS_FOLLOWER');
    const { identity: _identity, ...old } = cluster(T0, 3, { leader: 0 });
    expect(clusterMismatch(old)).toBeUndefined();
    expect(planOn([old]).reason).toBe('TARGET_IS_FOLLOWER');
  });
});

describe('memberGone across two clusters', () => {
  it('is never proven by a member list among answers from two clusters', () => {
    const v = view(T0, [
      { i: 0, leader: 0 },
      { i: 1, leader: 0, clusterId: OTHER },
    ]);
    expect(memberGone(v, id(5))).toBe(false);
    expect(
      memberGone(
        view(T0, [
          { i: 0, leader: 0 },
          { i: 1, leader: 0 },
        ]),
        id(5),
      ),
    ).toBe(true);
    expect(memberGone(buildClusterView(seedsOfTwoClusters), id(0))).toBe(false);
  });
});

describe('identityChanged: a bound identity against a later probe', () => {
  const bound = { etcdClusterId: FIXTURE_CLUSTER_ID, what: 'bound when first probed' };
  const one = cluster(T0, 3);

  it('passes the same cluster, and anything when nothing is bound or nothing answered with one id', () => {
    expect(clusterIdOf(one)).toBe(FIXTURE_CLUSTER_ID);
    expect(identityChanged(bound, one, 'prod')).toBeUndefined();
    expect(identityChanged(undefined, one, 'prod')).toBeUndefined();
    expect(identityChanged(bound, buildClusterView(seedsOfTwoClusters), 'prod')).toBeUndefined();
  });

  it('refuses another cluster answering under the name, naming both ids and the way out', () => {
    const other = { ...one, identity: { ids: [OTHER], id: OTHER, reports: [{ endpoint: SEED_B, clusterId: OTHER }] } };
    const changed = identityChanged(bound, other, 'prod');
    expect(changed?.reason).toBe('CLUSTER_MISMATCH');
    expect(changed?.message).toBe(
      `Cluster prod is etcd cluster ${FIXTURE_CLUSTER_ID} (bound when first probed), but its endpoints now answer as etcd cluster ${OTHER} (${SEED_B}); blocked, nothing is judged or removed across clusters. If the cluster was rebuilt on purpose, remediate it under a new cluster name or state file.`,
    );
  });
});
