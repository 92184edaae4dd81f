// settle() waits on etcd's own answer, not on a clock: it returns once every running member takes
// reconfiguration, at once on a lab that took it long ago, and never while a member is down.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { gatewayMemberList } from '../../../infra/lab/etcd-gateway.ts';
import { startLab } from '../../../infra/lab/lab.ts';
import { labPerTest } from '../e2e/pipeline.ts';
import { settle } from './support.ts';

const run = promisify(execFile);

describe.sequential('settle', () => {
  const t = labPerTest();

  it('returns once etcd takes a MemberRemove, and at once on a lab that settled already', async () => {
    const lab = (t.lab = await startLab({ members: 3 }));
    await settle(lab);
    // Settled already: every member takes it on the first look, with no wait.
    expect(await settle(lab)).toBe(1);

    const leader = await lab.leader();
    const [target, via] = lab.members.filter((m) => m.id !== leader.id);
    // Through a follower, as remediate removes: etcd answers with its own rule, no retry.
    await run(process.env.ETCDCTL_BIN ?? 'etcdctl', ['--endpoints', via!.directUrl, 'member', 'remove', target!.id], {
      env: { ...process.env, ETCDCTL_API: '3' },
    });
    // Read through the member that took it: etcd answers MemberRemove once that member applied it,
    // while the removed one, still running until it learns so, may answer with its old list.
    expect((await gatewayMemberList(via!.directUrl, 1_000)).map((m) => m.id)).not.toContain(target!.id);
  });

  it('does not return while a member is down: the others refuse reconfiguration', async () => {
    const lab = (t.lab = await startLab({ members: 3 }));
    await lab.kill(lab.members[2]!.name);
    // Longer than etcd's 5 s rule: only a member down can keep it refusing.
    await expect(settle(lab, 7_000)).rejects.toThrow(/unhealthy cluster/);
  });
});
