// The relay's argv run through the real etcdctl against real lab members, each parse compared
// with what the etcd3 adapter reports for the same member in the same state. No kube here: this
// runs etcdctl locally, as the exec would inside a healthy member's pod (plain http, no TLS).
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEtcd3Transport } from '../../../functions/adapters/etcd/index.ts';
import {
  defragArgv,
  endpointStatusArgv,
  isEtcdFailure,
  moveLeaderArgv,
  parseDefrag,
  parseEndpointStatus,
  parseMoveLeader,
  type RelayCall,
} from '../../../functions/adapters/kube/exec-relay/exec-relay-etcdctl.ts';
import { memberListArgv, parseMemberList } from '../../../functions/adapters/kube/exec-relay/exec-relay-members.ts';
import { classifyFailure } from '../../../functions/core/common/classify.ts';
import type { EtcdFailure, MemberList, MemberStatus } from '../../../functions/core/common/types.ts';
import { EtcdCallError } from '../../../functions/ports/etcd.ts';
import { startLab, type Lab, type LabMember } from '../../../infra/lab/lab.ts';
import { fragment } from '../../support/fragmented-lab.ts';

const MiB = 1024 * 1024;

const ETCDCTL = process.env.ETCDCTL_BIN ?? 'etcdctl';
const COMMAND_TIMEOUT_MS = 800;
// Only the healthy member is dialled to completion; a roomy dial keeps a busy machine from failing it.
const DIAL_TIMEOUT_MS = 1_000;

interface Run {
  stdout: string;
  stderr: string;
  exitCode: number | null;
}

/** Asynchronous on purpose: the lab's fault proxies live in this process and must keep serving. */
function runEtcdctl(argv: string[]): Promise<Run> {
  const [, ...args] = argv;
  return new Promise((resolve, reject) => {
    // etcdctl 3.4 defaults to v3 already; set anyway, so an older etcdctl on PATH behaves the same.
    const child = spawn(ETCDCTL, args, { env: { ...process.env, ETCDCTL_API: '3' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (exitCode) => resolve({ stdout, stderr, exitCode }));
  });
}

const relayCall = (member: LabMember): RelayCall => ({
  endpoint: member.clientUrl,
  commandTimeoutMs: COMMAND_TIMEOUT_MS,
  dialTimeoutMs: DIAL_TIMEOUT_MS,
  tls: null,
  binary: ETCDCTL,
});

async function relayStatus(member: LabMember): Promise<MemberStatus | EtcdFailure> {
  const run = await runEtcdctl(endpointStatusArgv(relayCall(member)));
  return parseEndpointStatus(run.stdout, run.stderr, run.exitCode);
}

async function relayMove(via: LabMember, to: LabMember): Promise<ReturnType<typeof parseMoveLeader>> {
  const run = await runEtcdctl(moveLeaderArgv(relayCall(via), to.id));
  return parseMoveLeader(run.stdout, run.stderr, run.exitCode);
}

async function relayMemberList(member: LabMember): Promise<MemberList | EtcdFailure> {
  const run = await runEtcdctl(memberListArgv(relayCall(member)));
  return parseMemberList(run.stdout, run.stderr, run.exitCode);
}

/** One fresh etcd3 transport per question: no channel state carried from one fault to the next. */
async function viaAdapter<T>(
  member: LabMember,
  ask: (client: ReturnType<ReturnType<typeof createEtcd3Transport>['client']>) => Promise<T>,
): Promise<T | EtcdFailure> {
  const transport = createEtcd3Transport();
  try {
    return await ask(transport.client({ endpoint: member.clientUrl, path: 'direct' }));
  } catch (error) {
    if (error instanceof EtcdCallError) return error.failure;
    throw error;
  } finally {
    await transport.close();
  }
}

function failureOf(value: object): EtcdFailure {
  if (!('kind' in value)) throw new Error(`expected a failure, got ${JSON.stringify(value)}`);
  return value as EtcdFailure;
}

function expectSameClass(relay: object, adapter: object): void {
  const [r, a] = [failureOf(relay), failureOf(adapter)];
  expect({ kind: r.kind, reason: classifyFailure(r).reason }, `relay ${JSON.stringify(r)} vs adapter ${JSON.stringify(a)}`).toEqual({
    kind: a.kind,
    reason: classifyFailure(a).reason,
  });
}

describe('etcdctl relay against real etcd', () => {
  let lab: Lab;
  beforeAll(async () => {
    lab = await startLab({ members: 3 });
  });
  afterAll(async () => {
    await lab?.down();
  });

  const follower = async (): Promise<LabMember> => {
    const leader = await lab.leader();
    return lab.members.find((m) => m.name !== leader.name)!;
  };

  it('reads a healthy member’s status as the etcd3 adapter does', async () => {
    const member = await follower();
    const relay = await relayStatus(member);
    const adapter = await viaAdapter(member, (c) => c.status(COMMAND_TIMEOUT_MS));
    if (isEtcdFailure(relay) || 'kind' in adapter) throw new Error(`expected statuses: ${JSON.stringify({ relay, adapter })}`);
    const stable = ({ leaderId, raftTerm, alarms, errors, version, isLearner, clusterId }: MemberStatus) => ({
      leaderId,
      raftTerm,
      alarms,
      errors,
      version,
      isLearner,
      clusterId,
    });
    expect(stable(relay)).toEqual(stable(adapter));
    expect(relay.leaderId).toBe((await lab.leader()).id);
    expect(relay.raftIndex).toBeGreaterThan(0);
  });

  it('gets "not leader" from move-leader aimed at a follower, as the adapter does', async () => {
    const leader = await lab.leader();
    const [via, to] = lab.members.filter((m) => m.name !== leader.name) as [LabMember, LabMember];
    const relay = await relayMove(via, to);
    const adapter = await viaAdapter(via, (c) => c.moveLeader(to.id, COMMAND_TIMEOUT_MS));
    expectSameClass(relay, adapter ?? {});
    expect(classifyFailure(failureOf(relay)).reason).toBe('LEADER_CHANGED');
  });

  it('gets "bad leader transferee" for an id not in the cluster, as the adapter does', async () => {
    const leader = await lab.leader();
    const stranger = { ...leader, id: 'abcdef' };
    const relay = await relayMove(leader, stranger);
    const adapter = await viaAdapter(leader, (c) => c.moveLeader(stranger.id, COMMAND_TIMEOUT_MS));
    expectSameClass(relay, adapter ?? {});
    expect(failureOf(relay).message).toBe('etcdserver: bad leader transferee');
  });

  it('moves leadership on the leader, and the adapter moves it back', async () => {
    const leader = await lab.leader();
    const to = await follower();
    expect(await relayMove(leader, to)).toEqual({ moved: true });
    expect((await lab.waitForLeader({ excluding: [leader.name] })).name).toBe(to.name);
    expect(await viaAdapter(to, (c) => c.moveLeader(leader.id, 2_000))).toBeUndefined();
    expect((await lab.waitForLeader({ excluding: [to.name] })).name).toBe(leader.name);
  });

  it('lists the members as the etcd3 adapter does: ids, names, URLs and cluster id, asked of each member', async () => {
    for (const member of lab.members) {
      const relay = await relayMemberList(member);
      const adapter = await viaAdapter(member, (c) => c.memberList(COMMAND_TIMEOUT_MS));
      if ('kind' in relay || 'kind' in adapter) throw new Error(`expected member lists: ${JSON.stringify({ relay, adapter })}`);
      expect(relay).toEqual(adapter);
    }
    // The uint64 ids come out exact (JSON numbers past 2^53 would round): the lab's own, by name.
    const listed = await relayMemberList(lab.members[0]!);
    if ('kind' in listed) throw new Error(`expected a member list: ${JSON.stringify(listed)}`);
    expect(listed.members.map((m) => [m.name, m.id, m.clientUrls]).sort()).toEqual(lab.members.map((m) => [m.name, m.id, [m.clientUrl]]).sort());
    expect(listed.members.every((m) => !m.isLearner && m.peerUrls.length === 1)).toBe(true);
  });

  it("defragments the member its URL names, as the adapter does: that member's free pages reclaimed, the others' kept", async () => {
    await fragment(lab, { liveMib: 1, churnMib: 6 });
    const target = await follower();
    const other = lab.members.find((m) => m.id !== target.id)!;
    const free = async (m: LabMember) => {
      const s = await viaAdapter(m, (c) => c.status(2_000));
      if ('kind' in s) throw new Error(`status of ${m.name}: ${JSON.stringify(s)}`);
      return s.dbSize - (s.dbSizeInUse ?? s.dbSize);
    };
    expect(await free(target)).toBeGreaterThan(3 * MiB);
    // A defragmentation takes longer than a status: the command's own deadline, as the step gives it.
    const run = await runEtcdctl(defragArgv({ ...relayCall(target), commandTimeoutMs: 20_000 }));
    expect(parseDefrag(run.stdout, run.stderr, run.exitCode)).toEqual({ defragmented: true });
    expect(await free(target)).toBeLessThan(MiB);
    expect(await free(other)).toBeGreaterThan(3 * MiB);
  });

  describe('a follower in each failed state', () => {
    /** `endpoint status` and `member list` through the relay fail in the adapter's class, and in `reason`. */
    async function expectFailsAsAdapter(member: LabMember, reason: string): Promise<void> {
      const relay = [await relayStatus(member), await relayMemberList(member)];
      const adapter = [await viaAdapter(member, (c) => c.status(COMMAND_TIMEOUT_MS)), await viaAdapter(member, (c) => c.memberList(COMMAND_TIMEOUT_MS))];
      relay.forEach((failure, i) => {
        expectSameClass(failure, adapter[i]!);
        expect(classifyFailure(failureOf(failure)).reason).toBe(reason);
      });
    }

    it.each([
      ['cut (refused)', 'cut', 'PATH_REFUSED'],
      ['blackholed (timeout)', 'blackhole', 'PATH_TIMEOUT'],
    ] as const)('%s', async (_, fault, reason) => {
      const member = await follower();
      await lab.fault(member.name, fault);
      try {
        await expectFailsAsAdapter(member, reason);
      } finally {
        await lab.fault(member.name, 'heal');
      }
    });

    it('stopped (timeout)', async () => {
      const member = await follower();
      lab.stop(member.name);
      try {
        await expectFailsAsAdapter(member, 'PATH_TIMEOUT');
      } finally {
        lab.cont(member.name);
      }
    });

    it('killed (refused behind its proxy)', async () => {
      const member = await follower();
      await lab.kill(member.name);
      await expectFailsAsAdapter(member, 'PATH_REFUSED');
    });
  });
});
