// The gate's refusals as a person meets them, on real etcd: two sick members of three get one
// message whichever is asked for (never "remediate the other first" both ways round), and a
// learner that joins blocks the removal of a voter.
import { afterEach, describe, expect, it } from 'vitest';
import { startLab, type Lab } from '../../../infra/lab/lab.ts';
import { jsonOf, runCli } from './support.ts';

interface Planned {
  outcome: string;
  reason: string;
  message: string;
}

const plan = async (lab: Lab, target: string): Promise<Planned & { code: number | null }> => {
  const run = await runCli(['plan', '--endpoints', lab.endpoints().join(','), '--target', target, '--timeout', '1s', '--election-timeout', '500ms', '--json'], {
    timeoutMs: 30_000,
  });
  return { code: run.code, ...jsonOf<Planned>(run) };
};

describe('the gate as a person meets it', () => {
  let lab: Lab | undefined;
  afterEach(async () => {
    await lab?.down();
    lab = undefined;
  });

  it('two of three stopped: one message for either target, naming both ways out, no circle', async () => {
    lab = await startLab({ members: 3, electionTimeoutMs: 500 });
    const leader = await lab.leader();
    const [a, b] = lab.members.filter((m) => m.id !== leader.id);
    lab.stop(a!.name);
    lab.stop(b!.name);

    const [forA, forB] = [await plan(lab, a!.name), await plan(lab, b!.name)];

    for (const said of [forA, forB]) {
      expect(said).toMatchObject({ outcome: 'blocked', code: 3 });
      expect(said.message).not.toMatch(/first/);
      expect(said.message).toMatch(
        /restore either .* or .*, or, if neither can be restored, recover the cluster from a snapshot of \S+, the member that answers with the most recent data \(term \d+, applied index \d+\), restored on every member \(etcd disaster recovery: `etcd-remediator plan` prints each step\)/,
      );
    }
    expect(forA.reason).toBe(forB.reason);
  }, 60_000);

  it('a learner joining a healthy 3-member cluster: the removal of a voter is blocked (MEMBER_NOT_READY), naming it', async () => {
    lab = await startLab({ members: 3, electionTimeoutMs: 500 });
    const leader = await lab.leader();
    const follower = lab.members.find((m) => m.id !== leader.id)!;
    const learner = await lab.addLearner();

    const said = await plan(lab, follower.name);

    expect(said).toMatchObject({ outcome: 'blocked', reason: 'MEMBER_NOT_READY', code: 3 });
    expect(said.message).toContain(learner.name);
  }, 60_000);
});
