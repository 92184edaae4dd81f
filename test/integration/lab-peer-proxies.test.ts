// The lab with peer proxies: every connection to a member's raft port goes through a fault proxy
// of its own, so a test can slow one member's peer traffic for real. (A cut there is no partition:
// etcd sends a member's messages over its pipeline, POSTs to the others' own raft ports, when the
// streams dialed to it are down.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestJson } from '../../infra/lab/http-json.ts';
import { startLab, type Lab, type LabMember } from '../../infra/lab/lab.ts';

/** A put through the member's real client port; resolves the milliseconds it took. */
async function timedPut(member: LabMember, key: string, timeoutMs = 5_000): Promise<number> {
  const started = performance.now();
  await requestJson({
    baseUrl: member.directUrl,
    path: '/v3/kv/put',
    body: { key: Buffer.from(key).toString('base64'), value: Buffer.from('v').toString('base64') },
    timeoutMs,
  });
  return performance.now() - started;
}

describe('a lab with peer proxies', () => {
  let lab: Lab;

  beforeAll(async () => {
    // A 100 ms heartbeat and a 1 s election timeout leave room for a 300 ms peer delay without an election.
    lab = await startLab({ members: 3, peerProxies: true, heartbeatMs: 100, electionTimeoutMs: 1_000 });
  });

  afterAll(async () => {
    await lab?.down();
  });

  it('comes up with an agreed leader, and the cluster knows every member by its peer proxy', async () => {
    const leader = await lab.leader();
    for (const member of lab.members) {
      expect((await lab.status(member.name)).leaderId).toBe(leader.id);
      expect(member.peerProxy).toBeDefined();
      expect(member.peerUrl).toBe(member.peerProxy!.url);
      expect(member.directPeerUrl).not.toBe(member.peerUrl);
    }
    const listed = await lab.memberList();
    expect(listed.map((m) => m.peerUrls).sort()).toEqual(lab.members.map((m) => [m.peerUrl]).sort());
    // The raft streams are proxied connections: two to each member, one from each other member.
    for (const member of lab.members) expect(member.peerProxy!.connectionCount).toBeGreaterThanOrEqual(2);
  });

  it("a delay on the leader's raft port slows every write, and calls no election", async () => {
    const leader = await lab.leader();
    const fast = await timedPut(leader, 'before-delay');
    const term = (await lab.status(leader.name)).raftTerm;
    await lab.faultPeer(leader.name, { delayMs: 300 });
    try {
      // The leader's appends travel on the streams its followers dialed to it: each reaches them 300 ms late.
      const slow = await timedPut(leader, 'delayed');
      expect(slow).toBeGreaterThan(300);
      expect(slow).toBeGreaterThan(fast * 3);
      // A delay under the election timeout calls no election.
      expect((await lab.leader()).id).toBe(leader.id);
      expect((await lab.status(leader.name)).raftTerm).toBe(term);
    } finally {
      await lab.faultPeer(leader.name, 'heal');
    }
  });

  it('refuses a peer fault on a lab without peer proxies, naming the member', async () => {
    await using plain = await startLab({ members: 1 });
    await expect(plain.faultPeer('etcd1', 'cut')).rejects.toThrow('faultPeer etcd1: this lab has no peer proxies');
  });
});
