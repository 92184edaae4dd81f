// remediate hands the actuator the Machine its probes placed the member on, by uid, so a step run
// again after that Machine was replaced by one of the same name leaves the replacement alone.
import { afterEach, describe, expect, it } from 'vitest';
import { moveLeader } from '../../../../functions/app/move/move-leader.ts';
import { probeMembers } from '../../../support/probe-members.ts';
import { remediate } from '../../../../functions/app/removal/remediate.ts';
import type { ReplaceRequest } from '../../../../functions/ports/actuator.ts';
import type { ProbeSample } from '../../../../functions/core/common/types.ts';
import { sample } from '../../core/fixtures.ts';
import { harness, unhealthy, type Harness } from '../harness.ts';

let h: Harness;
afterEach(async () => h?.close());

const machines = [0, 1, 2].map((i) => ({ name: `wl-etcd-${i}`, nodeName: `etcd-${i}`, deleting: false, uid: `uid-${i}` }));

describe('the Machine the actuator is asked to replace', () => {
  it('is the one the probes saw under the member, by uid, even when a later view lists another by its name', async () => {
    h = harness();
    const asked: ReplaceRequest[] = [];
    h.deps.actuator = { name: 'recording', replace: async (request) => (asked.push(request), { action: 'deleted', detail: 'recorded' }) };
    const withMachines = (s: ProbeSample, list = machines): ProbeSample => ({ ...s, machines: list });
    h.setSample((at) =>
      withMachines(
        sample(
          at,
          [0, 1, 2].map((i) => ({ i, leader: 0 })),
        ),
      ),
    );
    // Once etcd-1 is out, a Machine by its name with a new uid is listed: a replacement by then.
    h.onMemberRemove = () =>
      h.setSample((at) =>
        withMachines(
          sample(
            at,
            [0, 2].map((i) => ({ i, leader: 0 })),
          ),
          machines.map((m) => (m.name === 'wl-etcd-1' ? { ...m, uid: 'uid-new' } : m)),
        ),
      );
    await probeMembers(h.deps, { detailType: 'MemberUnhealthy', detail: unhealthy('etcd-1') });
    await moveLeader(h.deps, h.lastOf('MembersProbed'));
    await remediate(h.deps, h.lastOf('RemediationApproved'));

    expect(h.lastOf('RemediationCompleted')).toBeDefined();
    expect(asked.map((r) => r.machine)).toEqual([{ name: 'wl-etcd-1', uid: 'uid-1' }]);
  });

  it('is left unnamed when no probe read the Machines (no management access)', async () => {
    h = harness();
    const asked: ReplaceRequest[] = [];
    h.deps.actuator = { name: 'recording', replace: async (request) => (asked.push(request), { action: 'deleted', detail: 'recorded' }) };
    h.setSample((at) =>
      sample(
        at,
        [0, 1, 2].map((i) => ({ i, leader: 0 })),
      ),
    );
    h.onMemberRemove = () =>
      h.setSample((at) =>
        sample(
          at,
          [0, 2].map((i) => ({ i, leader: 0 })),
        ),
      );
    await probeMembers(h.deps, { detailType: 'MemberUnhealthy', detail: unhealthy('etcd-1') });
    await moveLeader(h.deps, h.lastOf('MembersProbed'));
    await remediate(h.deps, h.lastOf('RemediationApproved'));

    expect(asked).toHaveLength(1);
    expect(asked[0]!.machine).toBeUndefined();
  });
});
