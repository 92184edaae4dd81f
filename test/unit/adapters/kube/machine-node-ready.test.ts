// A Machine's NodeReady as Cluster API mirrors it, read from either version's place, and what the
// actuator makes of it: a Node that is not Ready cannot stop its pods, so drain is skipped.
import { describe, expect, it } from 'vitest';
import { drainCannotFinish } from '../../../../functions/adapters/kube/cluster-api/machine-actuator.ts';
import { toMachineRef } from '../../../../functions/adapters/kube/cluster-api/machines.ts';

const machine = (status: Record<string, unknown>) => ({
  metadata: { name: 'wl-cp-1', namespace: 'default', uid: 'u' },
  status: { nodeRef: { name: 'cp-1' }, ...status },
});
const notReady = { type: 'NodeReady', status: 'False', reason: 'NodeNotReady', message: '* Node.Ready: container runtime is down' };

describe('a Machine’s NodeReady', () => {
  it('is read from status.v1beta2.conditions (a v1beta1 read) and from status.conditions (v1beta2)', () => {
    expect(toMachineRef(machine({ v1beta2: { conditions: [notReady] } }), 'default')?.nodeReady).toEqual({
      status: 'False',
      reason: 'NodeNotReady',
      message: '* Node.Ready: container runtime is down',
    });
    expect(toMachineRef(machine({ conditions: [{ ...notReady, status: 'Unknown', reason: 'NodeReadyUnknown' }] }), 'default')?.nodeReady?.status).toBe(
      'Unknown',
    );
    expect(toMachineRef(machine({ conditions: [{ type: 'Ready', status: 'True' }] }), 'default')?.nodeReady).toBeUndefined();
  });

  it('skips drain for a Node that is not Ready, deleted or unknown, naming why; not for a Ready one or one Cluster API says nothing of', () => {
    expect(
      drainCannotFinish({ nodeName: 'cp-1', nodeReady: { status: 'False', reason: 'NodeNotReady', message: '* Node.Ready: container runtime is down' } }),
    ).toBe('its Node cp-1 is not Ready (NodeNotReady: Node.Ready: container runtime is down), so its pods cannot stop and a drain would wait for ever');
    expect(drainCannotFinish({ nodeName: 'cp-1', nodeReady: { status: 'False', reason: 'NodeDeleted', message: 'Node cp-1 has been deleted' } })).toContain(
      'NodeDeleted',
    );
    expect(drainCannotFinish({ nodeReady: { status: 'Unknown' } })).toBe(
      'its Node is not Ready (Unknown: NodeReady Unknown), so its pods cannot stop and a drain would wait for ever',
    );
    expect(drainCannotFinish({ nodeName: 'cp-1', nodeReady: { status: 'True', reason: 'NodeReady' } })).toBeUndefined();
    expect(drainCannotFinish({ nodeName: 'cp-1' })).toBeUndefined();
  });

  it('its UpToDate condition, from either version, says whether a rollout replaces it; none written says nothing', () => {
    const outdated = { type: 'UpToDate', status: 'False', reason: 'NotUpToDate' };
    expect(toMachineRef(machine({ v1beta2: { conditions: [outdated] } }), 'default')?.upToDate).toBe(false);
    expect(toMachineRef(machine({ conditions: [{ ...outdated, status: 'True' }] }), 'default')?.upToDate).toBe(true);
    expect(toMachineRef(machine({ conditions: [{ ...outdated, status: 'Unknown' }] }), 'default')).not.toHaveProperty('upToDate');
    expect(toMachineRef(machine({}), 'default')).not.toHaveProperty('upToDate');
  });
});
