// Cluster API's word on a request, read from its objects as Cluster API writes them: a paused
// Cluster (spec.paused, or the cluster.x-k8s.io/paused annotation), a paused MachineHealthCheck or
// Machine, and an MHC whose RemediationAllowed is False, in v1beta1 and v1beta2 shapes. The MHC
// objects are checked against Cluster API's own v1.13.5 schemas (test/fixtures/capi/), so they are
// the shapes a real API server returns.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { pauseOf, PAUSED_ANNOTATION } from '../../../../functions/adapters/kube/cluster-api/cluster-paused.ts';
import {
  competingHealthChecksOf,
  competitionsOf,
  healthChecksOf,
  holdOf,
  remediationNotAllowed,
  selectorMatches,
  type KubeObjectShape,
} from '../../../../functions/adapters/kube/cluster-api/remediation-allowed.ts';
import { validatorFor, type Schema } from '../../../infra/crd-schema.ts';

const FIXTURES = path.resolve(import.meta.dirname, '../../../fixtures/capi');
const schemaOf = (version: 'v1beta1' | 'v1beta2') =>
  JSON.parse(fs.readFileSync(path.join(FIXTURES, `machinehealthchecks.${version}.schema.json`), 'utf8')) as Schema;
const validate = { v1beta1: validatorFor(schemaOf('v1beta1')), v1beta2: validatorFor(schemaOf('v1beta2')) };

const SAID = 'Remediation is not allowed, the number of not started or unhealthy machines exceeds maxUnhealthy (total: 3, unhealthy: 2, maxUnhealthy: 1)';
const AT = '2026-07-01T10:05:00Z';
const CONTROL_PLANE = { 'cluster.x-k8s.io/control-plane': '' };

/** v1beta1: v1beta1 Conditions in status.conditions, metav1.Conditions in status.v1beta2.conditions. */
function mhcV1beta1(
  allowed: boolean,
  over: { name?: string; clusterName?: string; template?: string; selector?: object; annotations?: Record<string, string> } = {},
): KubeObjectShape {
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta1',
    kind: 'MachineHealthCheck',
    metadata: {
      name: over.name ?? 'wl-control-plane',
      namespace: 'default',
      labels: { 'cluster.x-k8s.io/cluster-name': 'wl' },
      ...(over.annotations ? { annotations: over.annotations } : {}),
    },
    spec: {
      clusterName: over.clusterName ?? 'wl',
      selector: over.selector ?? { matchLabels: CONTROL_PLANE },
      unhealthyConditions: [{ type: 'Ready', status: 'Unknown', timeout: '300s' }],
      maxUnhealthy: 1,
      remediationTemplate: {
        apiVersion: 'etcd-remediator.io/v1alpha1',
        kind: 'EtcdRemediationRequestTemplate',
        name: over.template ?? 'etcd-remediator',
        namespace: 'default',
      },
    },
    status: {
      expectedMachines: 3,
      currentHealthy: allowed ? 2 : 1,
      remediationsAllowed: allowed ? 1 : 0,
      observedGeneration: 1,
      targets: ['wl-cp-1', 'wl-cp-2', 'wl-cp-3'],
      conditions: [
        allowed
          ? { type: 'RemediationAllowed', status: 'True', lastTransitionTime: AT }
          : { type: 'RemediationAllowed', status: 'False', severity: 'Warning', reason: 'TooManyUnhealthy', message: SAID, lastTransitionTime: AT },
      ],
      v1beta2: {
        conditions: [
          allowed
            ? { type: 'RemediationAllowed', status: 'True', reason: 'RemediationAllowed', message: '', observedGeneration: 1, lastTransitionTime: AT }
            : { type: 'RemediationAllowed', status: 'False', reason: 'TooManyUnhealthy', message: SAID, observedGeneration: 1, lastTransitionTime: AT },
        ],
      },
    },
  } as KubeObjectShape;
}

/** v1beta2: metav1.Conditions in status.conditions, v1beta1 Conditions in status.deprecated.v1beta1.conditions. */
function mhcV1beta2(allowed: boolean, where: 'conditions' | 'deprecated' = 'conditions'): KubeObjectShape {
  const current = allowed
    ? { type: 'RemediationAllowed', status: 'True', reason: 'RemediationAllowed', message: '', observedGeneration: 1, lastTransitionTime: AT }
    : { type: 'RemediationAllowed', status: 'False', reason: 'TooManyUnhealthy', message: SAID, observedGeneration: 1, lastTransitionTime: AT };
  const deprecated = allowed
    ? { type: 'RemediationAllowed', status: 'True', lastTransitionTime: AT }
    : { type: 'RemediationAllowed', status: 'False', severity: 'Warning', reason: 'TooManyUnhealthy', message: SAID, lastTransitionTime: AT };
  const paused = { type: 'Paused', status: 'False', reason: 'NotPaused', message: '', observedGeneration: 1, lastTransitionTime: AT };
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'MachineHealthCheck',
    metadata: { name: 'wl-control-plane', namespace: 'default' },
    spec: {
      clusterName: 'wl',
      selector: { matchLabels: CONTROL_PLANE },
      checks: { unhealthyNodeConditions: [{ type: 'Ready', status: 'Unknown', timeoutSeconds: 300 }] },
      remediation: {
        triggerIf: { unhealthyLessThanOrEqualTo: 1 },
        templateRef: { apiVersion: 'etcd-remediator.io/v1alpha1', kind: 'EtcdRemediationRequestTemplate', name: 'etcd-remediator' },
      },
    },
    status: {
      // Only one list says False: either is enough.
      conditions: where === 'conditions' ? [current, paused] : [{ ...current, status: 'True', reason: 'RemediationAllowed', message: '' }, paused],
      expectedMachines: 3,
      currentHealthy: 1,
      remediationsAllowed: 0,
      observedGeneration: 1,
      targets: ['wl-cp-1', 'wl-cp-2', 'wl-cp-3'],
      deprecated: { v1beta1: { conditions: [where === 'deprecated' ? deprecated : { type: 'RemediationAllowed', status: 'True', lastTransitionTime: AT }] } },
    },
  } as KubeObjectShape;
}

const machine = (annotations?: Record<string, string>): KubeObjectShape => ({
  metadata: {
    name: 'wl-cp-1',
    namespace: 'default',
    labels: { 'cluster.x-k8s.io/cluster-name': 'wl', ...CONTROL_PLANE },
    ...(annotations ? { annotations } : {}),
  },
  spec: { clusterName: 'wl' },
});

describe('the MachineHealthCheck fixtures are Cluster API’s shapes', () => {
  it.each([
    ['v1beta1, allowed', 'v1beta1', mhcV1beta1(true)],
    ['v1beta1, short-circuited', 'v1beta1', mhcV1beta1(false)],
    ['v1beta2, short-circuited in status.conditions', 'v1beta2', mhcV1beta2(false)],
    ['v1beta2, short-circuited in status.deprecated', 'v1beta2', mhcV1beta2(false, 'deprecated')],
  ] as const)('%s validates against its schema', (_, version, object) => {
    expect(validate[version](object)).toEqual([]);
  });
});

describe('pauseOf (util/annotations IsPaused)', () => {
  it.each([
    ['a v1beta1 Cluster with spec.paused true', 'Cluster', { metadata: { name: 'wl', namespace: 'default' }, spec: { paused: true } }, 'spec.paused'],
    ['a v1beta1 Cluster with spec.paused false', 'Cluster', { metadata: { name: 'wl', namespace: 'default' }, spec: { paused: false } }, undefined],
    [
      'a v1beta2 Cluster without spec.paused (clusterctl move writes null to unpause)',
      'Cluster',
      { metadata: { name: 'wl', namespace: 'default' }, spec: {} },
      undefined,
    ],
    [
      'a Cluster with the annotation, empty',
      'Cluster',
      { metadata: { name: 'wl', namespace: 'default', annotations: { [PAUSED_ANNOTATION]: '' } }, spec: {} },
      'annotation',
    ],
    [
      'a Cluster with the annotation "false": present is paused',
      'Cluster',
      { metadata: { name: 'wl', namespace: 'default', annotations: { [PAUSED_ANNOTATION]: 'false' } } },
      'annotation',
    ],
    [
      'an MHC with the annotation',
      'MachineHealthCheck',
      { metadata: { name: 'm', namespace: 'default', annotations: { [PAUSED_ANNOTATION]: 'true' } } },
      'annotation',
    ],
    [
      'an MHC whose spec says paused: not a field of it',
      'MachineHealthCheck',
      { metadata: { name: 'm', namespace: 'default' }, spec: { paused: true } },
      undefined,
    ],
    [
      'a Machine with the annotation',
      'Machine',
      { metadata: { name: 'wl-cp-1', namespace: 'default', annotations: { [PAUSED_ANNOTATION]: '' } } },
      'annotation',
    ],
    ['no object at all', 'Cluster', undefined, undefined],
  ] as const)('%s', (_, kind, object, by) => {
    expect(pauseOf(kind, object)?.by).toBe(by);
  });
});

describe('selectorMatches (HasMatchingLabels)', () => {
  const labels = { 'cluster.x-k8s.io/cluster-name': 'wl', 'cluster.x-k8s.io/control-plane': '', tier: 'a' };
  it.each([
    ['matchLabels that hold', { matchLabels: CONTROL_PLANE }, true],
    ['matchLabels with another value', { matchLabels: { tier: 'b' } }, false],
    ['In', { matchExpressions: [{ key: 'tier', operator: 'In', values: ['a', 'b'] }] }, true],
    ['NotIn', { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['a'] }] }, false],
    ['NotIn of an absent key', { matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['x'] }] }, true],
    ['Exists', { matchExpressions: [{ key: 'cluster.x-k8s.io/control-plane', operator: 'Exists' }] }, true],
    ['DoesNotExist', { matchExpressions: [{ key: 'cluster.x-k8s.io/deployment-name', operator: 'DoesNotExist' }] }, true],
    ['both kinds, one failing', { matchLabels: CONTROL_PLANE, matchExpressions: [{ key: 'tier', operator: 'In', values: ['b'] }] }, false],
    ['an unknown operator', { matchExpressions: [{ key: 'tier', operator: 'Gt', values: ['1'] }] }, false],
    ['an empty selector: nothing, not everything', {}, false],
    ['no selector', undefined, false],
  ] as const)('%s', (_, selector, matches) => {
    expect(selectorMatches(selector, labels)).toBe(matches);
  });
});

describe('healthChecksOf: the MHCs that made a request of this Machine', () => {
  const watched = { clusterName: 'wl', labels: { 'cluster.x-k8s.io/control-plane': '' }, templateName: 'etcd-remediator' };
  it('takes the MHC of the Cluster whose selector matches and whose template the request came from', () => {
    const mine = mhcV1beta1(false);
    const others = [
      mhcV1beta1(false, { name: 'other-cluster', clusterName: 'other' }),
      mhcV1beta1(false, { name: 'workers', selector: { matchLabels: { 'cluster.x-k8s.io/deployment-name': 'wl-md-0' } } }),
      mhcV1beta1(false, { name: 'other-template', template: 'kcp-remediation' }),
    ];
    expect(healthChecksOf([mine, ...others], watched)).toEqual([mine]);
    expect(healthChecksOf([mhcV1beta2(false)], watched)).toHaveLength(1);
  });

  it('a request that names no template: every MHC of the Machine counts', () => {
    const { templateName: _none, ...untemplated } = watched;
    expect(healthChecksOf([mhcV1beta1(false), mhcV1beta1(false, { name: 'other-template', template: 'kcp-remediation' })], untemplated)).toHaveLength(2);
  });

  it('the selector is matched with the cluster-name label the controller adds to it', () => {
    const selector = { matchLabels: { 'cluster.x-k8s.io/cluster-name': 'wl', ...CONTROL_PLANE } };
    expect(healthChecksOf([mhcV1beta1(false, { selector })], { ...watched, labels: CONTROL_PLANE })).toHaveLength(1);
  });
});

describe('remediationNotAllowed', () => {
  it.each([
    ['v1beta1, status.conditions', mhcV1beta1(false)],
    ['v1beta2, status.conditions', mhcV1beta2(false)],
    ['v1beta2, only status.deprecated.v1beta1.conditions', mhcV1beta2(false, 'deprecated')],
  ] as const)('False in %s: MHC’s reason and words', (_, mhc) => {
    expect(remediationNotAllowed(mhc)).toEqual({ reason: 'TooManyUnhealthy', message: SAID });
  });

  it('True, or no condition yet (a new MHC): allowed', () => {
    expect(remediationNotAllowed(mhcV1beta1(true))).toBeUndefined();
    expect(remediationNotAllowed(mhcV1beta2(true))).toBeUndefined();
    expect(remediationNotAllowed({ metadata: { name: 'new' }, spec: {} })).toBeUndefined();
  });
});

describe('holdOf', () => {
  const cluster = (spec: object, annotations?: Record<string, string>): KubeObjectShape => ({
    metadata: { name: 'wl', namespace: 'default', ...(annotations ? { annotations } : {}) },
    spec,
  });

  it('nothing holds a request of an unpaused Cluster whose MHC allows remediation', () => {
    expect(holdOf({ cluster: cluster({ paused: false }), machine: machine(), healthChecks: [mhcV1beta1(true)] })).toBeUndefined();
    expect(holdOf({ healthChecks: [] })).toBeUndefined();
  });

  it('a paused Cluster: CLUSTER_PAUSED, saying who paused what and how to unpause it; before any MHC word', () => {
    const hold = holdOf({ cluster: cluster({ paused: true }), machine: machine(), healthChecks: [mhcV1beta1(false)] });
    expect(hold?.reason).toBe('CLUSTER_PAUSED');
    expect(hold?.message).toContain('Cluster default/wl is paused (spec.paused: true');
    expect(hold?.message).toContain('clusterctl move');
    expect(hold?.message).toContain(`kubectl patch cluster wl -n default --type merge -p '{"spec":{"paused":null}}'`);
  });

  it.each([
    [
      'the Cluster',
      { cluster: cluster({}, { [PAUSED_ANNOTATION]: '' }), machine: machine(), healthChecks: [] },
      'Cluster default/wl',
      'kubectl annotate cluster wl -n default cluster.x-k8s.io/paused-',
    ],
    [
      'the Machine',
      { machine: machine({ [PAUSED_ANNOTATION]: '' }), healthChecks: [] },
      'Machine default/wl-cp-1',
      'kubectl annotate machine wl-cp-1 -n default cluster.x-k8s.io/paused-',
    ],
    [
      'the MachineHealthCheck',
      { machine: machine(), healthChecks: [mhcV1beta1(true, { annotations: { [PAUSED_ANNOTATION]: '' } })] },
      'MachineHealthCheck default/wl-control-plane',
      'kubectl annotate machinehealthcheck wl-control-plane -n default cluster.x-k8s.io/paused-',
    ],
  ] as const)('the annotation on %s: CLUSTER_PAUSED, and how to remove it', (_, input, what, remedy) => {
    const hold = holdOf(input);
    expect(hold?.reason).toBe('CLUSTER_PAUSED');
    expect(hold?.message).toContain(`${what} carries the cluster.x-k8s.io/paused annotation`);
    expect(hold?.message).toContain(remedy);
  });

  it('a short-circuited MHC: REMEDIATION_NOT_ALLOWED in MHC’s own words, and what lets it go on', () => {
    const hold = holdOf({ cluster: cluster({}), machine: machine(), healthChecks: [mhcV1beta2(false)] });
    expect(hold?.reason).toBe('REMEDIATION_NOT_ALLOWED');
    expect(hold?.message).toContain(
      `MachineHealthCheck default/wl-control-plane short-circuits remediation (RemediationAllowed False, TooManyUnhealthy: ${SAID})`,
    );
    expect(hold?.message).toMatch(/fewer of its Machines are unhealthy/);
  });
});

describe('a MachineHealthCheck that competes for the Machine', () => {
  const machine = { clusterName: 'wl', labels: CONTROL_PLANE };
  const withoutTemplate = (name: string): KubeObjectShape => {
    const mhc = mhcV1beta1(true, { name }) as { spec: Record<string, unknown> };
    const { remediationTemplate: _none, ...spec } = mhc.spec;
    return { ...mhc, spec };
  };
  const otherKind = (name: string): KubeObjectShape => {
    const mhc = mhcV1beta1(true, { name }) as { spec: Record<string, unknown> };
    return { ...mhc, spec: { ...mhc.spec, remediationTemplate: { apiVersion: 'x.io/v1', kind: 'Metal3RemediationTemplate', name: 'm3' } } };
  };

  it('is one with no template or another kind of template; ours under any name, and one of other Machines, are not', () => {
    const ours = mhcV1beta1(true, { name: 'ours', template: 'another-name-of-ours' });
    const workers = {
      ...withoutTemplate('workers'),
      spec: { ...(withoutTemplate('workers').spec as object), selector: { matchLabels: { role: 'worker' } } },
    } as KubeObjectShape;
    const found = competingHealthChecksOf([ours, withoutTemplate('kcp'), otherKind('metal3'), workers], machine);
    expect(found.map((m) => m.metadata?.name)).toEqual(['kcp', 'metal3']);
  });

  it('holds the request, after a pause and before a short-circuit, naming the MHC, whom it hands the Machine to, and what to change', () => {
    const hold = holdOf({ machine: { metadata: { name: 'wl-cp-1', namespace: 'default' } }, healthChecks: [], competing: [otherKind('metal3')] });
    expect(hold).toEqual({
      reason: 'COMPETING_REMEDIATION',
      message:
        'MachineHealthCheck default/metal3 also selects Machine default/wl-cp-1 and hands it to Metal3RemediationTemplate m3, in parallel with etcd-remediator and outside its lock: the request is not acted on while two remediators would act on one Machine. Give it our template (EtcdRemediationRequestTemplate) or delete it; the request is then reported',
    });
    const paused = holdOf({
      cluster: { metadata: { name: 'wl', namespace: 'default' }, spec: { paused: true } },
      healthChecks: [],
      competing: [otherKind('metal3')],
    });
    expect(paused?.reason).toBe('CLUSTER_PAUSED');
    const shortCircuited = holdOf({ healthChecks: [mhcV1beta1(false)], competing: [withoutTemplate('kcp')] });
    expect(shortCircuited?.reason).toBe('COMPETING_REMEDIATION');
  });

  describe('competitionsOf: what the scan finds before any request', () => {
    const machineObject = (name: string, cluster = 'wl', namespace = 'default'): KubeObjectShape => ({
      metadata: { name, namespace, labels: { 'cluster.x-k8s.io/cluster-name': cluster, ...CONTROL_PLANE } },
    });
    const ours = mhcV1beta1(true, { name: 'ours' });

    it('each competing MHC once, with the Machines it shares with ours, sorted, and ours by name', () => {
      const found = competitionsOf([ours, withoutTemplate('kcp'), otherKind('metal3')], [machineObject('wl-cp-2'), machineObject('wl-cp-1')]);
      expect(found.map((c) => [c.rival.metadata?.name, c.ours, c.machines])).toEqual([
        ['kcp', ['ours'], ['wl-cp-1', 'wl-cp-2']],
        ['metal3', ['ours'], ['wl-cp-1', 'wl-cp-2']],
      ]);
      expect(found[0]!.message).toBe(
        "MachineHealthCheck default/kcp selects Machines wl-cp-1, wl-cp-2, which ours hands to etcd-remediator, and has no remediation template, so KubeadmControlPlane remediates them itself, in parallel and outside etcd-remediator's lock: " +
          'a request for them is not acted on (COMPETING_REMEDIATION) while two remediators would act on one Machine. Give it our template (EtcdRemediationRequestTemplate) or delete it',
      );
    });

    it('nothing where no MHC of ours watches the Machines, for another Cluster, or in another namespace', () => {
      expect(competitionsOf([withoutTemplate('kcp')], [machineObject('wl-cp-1')])).toEqual([]);
      expect(competitionsOf([ours, withoutTemplate('kcp')], [machineObject('other-cp-1', 'other')])).toEqual([]);
      const elsewhere = { ...withoutTemplate('kcp'), metadata: { ...withoutTemplate('kcp').metadata, namespace: 'team-b' } };
      expect(competitionsOf([ours, elsewhere], [machineObject('wl-cp-1')])).toEqual([]);
      // A Machine without its Cluster's label is no Machine the controller would match.
      expect(competitionsOf([ours, withoutTemplate('kcp')], [{ metadata: { name: 'x', namespace: 'default', labels: CONTROL_PLANE } }])).toEqual([]);
    });
  });
});
