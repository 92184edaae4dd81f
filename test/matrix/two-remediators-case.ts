// Case 18: two remediators at once on one cluster, as the issue has it: the `run` service and a CLI
// `remediate`, each a process of the real binary with a state file of its own, both told of the
// same sick follower at the same moment. Only the lock and the removal record in the cluster's own
// etcd are shared between them, and those must let exactly one remove it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { check, says, type MatrixCase } from './harness.ts';
import { followersOf, membershipIs } from './lab-checks.ts';
import { cliRemediate, settle, startRunService, watchRemoval, type ProcessRemediator } from './process-remediators.ts';

const CLUSTER_ID = 'lab';

/** This run's processes, for verify and cleanup (cases run one at a time). */
const current: { dir: string; remediators: ProcessRemediator[]; serviceExit?: number | null; cliExit?: number | null } = { dir: '', remediators: [] };

export const twoRemediatorsAtOnce: MatrixCase = {
  n: 18,
  name: 'two-remediators-at-once',
  members: 3,
  // The loser learns of the winner from the cluster's own etcd (the lock, then the removal record,
  // whatever it meets first) and closes: the member is gone as asked, nobody needs to act.
  expected: 'removed+closed',
  reason: 'TARGET_IS_FOLLOWER+DUPLICATE_INCIDENT',
  async arrange(lab) {
    const { followers } = await followersOf(lab);
    Object.assign(current, {
      dir: fs.mkdtempSync(path.join(os.tmpdir(), 'matrix-two-remediators-')),
      remediators: [],
      serviceExit: undefined,
      cliExit: undefined,
    });
    return {
      targets: [followers[0]!],
      cleanup: async () => {
        // Stopped before their state files go, whatever happened.
        for (const r of current.remediators) await r.close();
        fs.rmSync(current.dir, { recursive: true, force: true });
      },
    };
  },
  async act(ctx) {
    const target = ctx.arranged.targets[0]!;
    const service = await startRunService(ctx.lab, current.dir, CLUSTER_ID);
    const cli = cliRemediate(ctx.lab, current.dir, CLUSTER_ID);
    current.remediators.push(service, cli);
    ctx.others.push(service, cli);
    const watcher = watchRemoval(ctx.lab, target.id, [service, cli]);
    let done;
    try {
      // Both told at once: the POST goes as the CLI, its seconds of start-up behind it, reports the
      // member to its own runtime. Posted at its spawn, the service would be done before it looked.
      await cli.start(target.name);
      done = await Promise.all([service.report(target.name), cli.finished()]);
    } finally {
      await watcher.stop();
    }
    const [served, printed] = done;
    // Stopped before its state file is read: its journal is complete once it has exited.
    current.serviceExit = await service.stop();
    current.cliExit = printed.code;
    const outcomes = [await settle(service, served), await settle(cli, printed.result)];
    // The removal first, then the other remediator's outcome.
    return outcomes.sort((a, b) => Number(b.detailType === 'RemediationCompleted') - Number(a.detailType === 'RemediationCompleted'));
  },
  async verify({ lab, arranged, pipeline }, { outcomes, deciding }) {
    const target = arranged.targets[0]!;
    const [service, cli] = current.remediators;
    const pids = current.remediators.map((r) => r.pid);
    const removals = current.remediators.flatMap((r) => r.calls.removed);
    const cliRemoved = cli?.events.some((e) => e.detailType === 'RemediationCompleted');
    return [
      // Two processes of their own, each with its own state file, and the harness's runtime idle.
      ...check(
        pids.length === 2 && new Set(pids).size === 2 && pids.every((p) => p !== undefined && p !== process.pid),
        `not two separate processes: pids ${pids.join(', ')}`,
      ),
      ...check(new Set([pipeline.statePath, service?.statePath, cli?.statePath]).size === 3, 'the remediators share a state file'),
      ...check(pipeline.events.length === 0 && pipeline.calls.memberRemove.length === 0, 'the in-process runtime took part'),
      ...check(current.serviceExit === 0, `${service?.label} exited ${current.serviceExit} on SIGTERM`),
      ...check(current.cliExit === (cliRemoved ? 0 : 5), `${cli?.label} exited ${current.cliExit} after ${cliRemoved ? 'removing' : 'not removing'}`),
      ...check(outcomes.filter((o) => o.detailType === 'RemediationCompleted').length === 1, 'not exactly one remediator removed the member'),
      ...check(removals.length === 1, `the journals hold ${removals.length} accepted MemberRemove calls, expected 1`),
      ...says('other remediator', deciding.message, [target.name]),
      ...(await membershipIs(lab, [target])),
    ];
  },
};
