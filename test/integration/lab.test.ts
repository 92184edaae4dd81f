import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewayStatus } from '../../infra/lab/etcd-gateway.ts';
import { startFaultProxy } from '../../infra/lab/fault-proxy.ts';
import { HttpCallError } from '../../infra/lab/http-json.ts';
import { attachLab, spawnLabDaemon } from '../../infra/lab/lab-attach.ts';
import { isAlive } from '../../infra/lab/pids.ts';
import { startLab, type Lab } from '../../infra/lab/lab.ts';
import { waitFor } from '../../functions/lib/wait-for.ts';

/** A process's state letter as the kernel reports it (/proc/PID/stat's third field): T when stopped. */
const processState = (pid: number): string | undefined => {
  try {
    return /^\d+ \(.*\) (\S)/.exec(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'))?.[1];
  } catch {
    return undefined;
  }
};

async function failureCode(call: Promise<unknown>): Promise<string> {
  try {
    await call;
  } catch (error) {
    if (error instanceof HttpCallError) return error.code;
    throw error;
  }
  return 'no failure';
}

/** Resolves with the first bytes the socket receives, or 'silence' if none came in time. */
function firstBytesWithin(socket: net.Socket, ms: number): Promise<string> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      socket.off('data', onData);
      resolve('silence');
    }, ms);
    const onData = (chunk: Buffer) => {
      clearTimeout(timer);
      socket.off('data', onData);
      resolve(chunk.toString('utf8'));
    };
    socket.on('data', onData);
  });
}

describe('lab of three real etcd members', () => {
  let lab: Lab;

  beforeAll(async () => {
    lab = await startLab({ members: 3 });
  });

  afterAll(async () => {
    await lab?.down();
  });

  it('comes up with one agreed leader and advertises the proxies', async () => {
    expect(lab.members.map((m) => m.name)).toEqual(['etcd1', 'etcd2', 'etcd3']);
    const leader = await lab.leader();
    for (const member of lab.members) {
      expect(member.id).toMatch(/^[0-9a-f]+$/);
      const status = await lab.status(member.name);
      expect(status.memberId).toBe(member.id);
      expect(status.leaderId).toBe(leader.id);
    }
    const list = await lab.memberList();
    expect(list.map((m) => m.clientUrls[0]).sort()).toEqual(lab.endpoints().sort());
    expect(lab.endpoints()).not.toContain(lab.members[0]!.directUrl);
  });

  it('cut refuses the proxy while the member itself stays healthy; heal restores it', async () => {
    const leader = await lab.leader();
    await lab.fault(leader.name, 'cut');
    expect(leader.proxy.mode).toBe('cut');
    expect(await failureCode(gatewayStatus(leader.clientUrl, 1_000))).toBe('ECONNREFUSED');
    expect((await gatewayStatus(leader.directUrl, 1_000)).memberId).toBe(leader.id);
    expect((await lab.leader()).id).toBe(leader.id);

    await lab.fault(leader.name, 'heal');
    expect(leader.proxy.mode).toBe('pass');
    expect((await gatewayStatus(leader.clientUrl, 1_000)).leaderId).toBe(leader.id);
  });

  it('blackhole makes callers time out, on new and live connections, while direct answers', async () => {
    const member = lab.members[1]!;
    const live = net.connect(member.proxy.port, '127.0.0.1');
    await new Promise((resolve) => live.once('connect', resolve));
    try {
      await lab.fault(member.name, 'blackhole');
      expect(await failureCode(gatewayStatus(member.clientUrl, 300))).toBe('ETIMEDOUT');
      expect((await gatewayStatus(member.directUrl, 1_000)).memberId).toBe(member.id);

      live.write('GET /version HTTP/1.1\r\nHost: x\r\n\r\n');
      expect(await firstBytesWithin(live, 300)).toBe('silence');
      expect(live.destroyed).toBe(false);

      // The held request goes through once healed: nothing was dropped.
      const answer = firstBytesWithin(live, 2_000);
      await lab.fault(member.name, 'heal');
      expect(await answer).toMatch(/^HTTP\/1\.1 200/);
    } finally {
      live.destroy();
    }
  });

  it('delay adds at least the delay to a call', async () => {
    const member = lab.members[2]!;
    const delayMs = 200;
    await lab.fault(member.name, { delayMs });
    try {
      const started = performance.now();
      await gatewayStatus(member.clientUrl, 5_000);
      expect(performance.now() - started).toBeGreaterThanOrEqual(delayMs);
    } finally {
      await lab.fault(member.name, 'heal');
    }
  });

  it('SIGSTOP of the leader elects another; SIGCONT brings it back as a follower', async () => {
    const old = await lab.leader();
    lab.stop(old.name);
    try {
      const next = await lab.waitForLeader({ excluding: [old.name], timeoutMs: 10_000 });
      expect(next.name).not.toBe(old.name);
    } finally {
      lab.cont(old.name);
    }
    const settled = await waitFor(
      async () => {
        const leader = await lab.leader();
        const oldView = await lab.status(old.name);
        return oldView.leaderId === leader.id && leader.name !== old.name ? leader : undefined;
      },
      { timeoutMs: 10_000, what: `${old.name} to follow the new leader` },
    );
    expect(settled.id).not.toBe(old.id);
  });

  it('addLearner starts a member that the cluster lists as a learner', async () => {
    const learner = await lab.addLearner({ timeoutMs: 20_000 });
    expect(learner.isLearner).toBe(true);
    expect(isAlive(learner.pid)).toBe(true);
    const listed = (await lab.memberList()).find((m) => m.id === learner.id);
    expect(listed).toMatchObject({ name: learner.name, isLearner: true, clientUrls: [learner.clientUrl] });
    expect((await lab.status(learner.name)).isLearner).toBe(true);
  });

  it('kill leaves the member in the cluster, unreachable, and the cluster keeps a leader', async () => {
    const leader = await lab.waitForLeader();
    const victim = lab.members.find((m) => m.name !== leader.name && !m.isLearner)!;
    await lab.kill(victim.name);
    expect(isAlive(victim.pid)).toBe(false);
    expect(await failureCode(gatewayStatus(victim.directUrl, 1_000))).toBe('ECONNREFUSED');
    expect((await lab.memberList()).map((m) => m.id)).toContain(victim.id);
    expect((await lab.waitForLeader({ timeoutMs: 5_000 })).name).not.toBe(victim.name);
  });

  it('down leaves no process and no data behind, and may be called again', async () => {
    const pids = lab.members.map((m) => m.pid);
    const dirs = [lab.root, ...lab.members.map((m) => m.dataDir)];
    await lab.down();
    for (const pid of pids) expect(isAlive(pid)).toBe(false);
    for (const dir of dirs) expect(fs.existsSync(dir)).toBe(false);
    await expect(lab.down()).resolves.toBeUndefined();
  });
});

describe('fault proxy', () => {
  it('keeps byte order under delay and refuses, then re-listens on the same port', async () => {
    const echo = net.createServer((socket) => {
      socket.on('error', () => undefined); // the cut below resets it
      socket.pipe(socket);
    });
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    const proxy = await startFaultProxy({ upstreamPort: (echo.address() as net.AddressInfo).port });
    try {
      const port = proxy.port;
      await expect(proxy.delay(-1)).rejects.toThrow(/invalid fault mode/);
      expect(proxy.mode).toBe('pass');
      await proxy.delay(20);
      const socket = net.connect(port, '127.0.0.1');
      const socketError = new Promise<string>((resolve) => socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error')));
      let received = '';
      socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
      const sent = Array.from({ length: 50 }, (_, i) => `<${i}>`);
      for (const piece of sent) {
        socket.write(piece);
        await new Promise((resolve) => setImmediate(resolve));
      }
      await waitFor(async () => (received.length === sent.join('').length ? true : undefined), {
        timeoutMs: 5_000,
        what: 'all echoed bytes',
      });
      expect(received).toBe(sent.join(''));

      await proxy.cut();
      // A live connection is reset, not left open: a caller mid-request fails at once.
      expect(await socketError).toBe('ECONNRESET');
      expect(proxy.connectionCount).toBe(0);
      const refused = await new Promise<string>((resolve) => {
        const probe = net.connect(port, '127.0.0.1');
        probe.on('connect', () => resolve('connected'));
        probe.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
      });
      expect(refused).toBe('ECONNREFUSED');

      await proxy.heal();
      expect(proxy.port).toBe(port);
      const again = net.connect(port, '127.0.0.1');
      const reply = firstBytesWithin(again, 2_000);
      again.write('ping');
      expect(await reply).toBe('ping');
      again.destroy();
    } finally {
      await proxy.close();
      echo.close();
    }
  });
});

describe('startLab', () => {
  it('says how to get etcd when the binary is missing', async () => {
    await expect(startLab({ members: 1, etcdBin: '/nonexistent/etcd' })).rejects.toThrow(/etcd-server|ETCD_BIN/);
  });

  it('refuses a member count outside 1..7', async () => {
    await expect(startLab({ members: 8 })).rejects.toThrow(/1 to 7/);
  });
});

describe('lab daemon, driven through its state file as separate commands would', () => {
  let workDir: string;

  beforeAll(() => {
    workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lab-daemon-test-'));
  });

  afterAll(() => {
    fs.rmSync(workDir, { recursive: true, force: true });
  });

  it('keeps proxies alive across attachments, faults them, and comes down cleanly', async () => {
    const stateFile = path.join(workDir, 'lab.json');
    const started = await spawnLabDaemon(stateFile, { members: 1, namePrefix: 'd' });
    const daemonPid = started.state.ownerPid;
    const etcdPid = started.member('d1').pid;
    try {
      expect(daemonPid).not.toBe(process.pid);
      const lab = attachLab(stateFile);
      const member = lab.member('d1');
      expect((await gatewayStatus(member.clientUrl, 1_000)).memberId).toBe(member.id);
      expect((await lab.leader()).name).toBe('d1');

      await lab.fault('d1', 'cut');
      expect(attachLab(stateFile).member('d1').mode).toBe('cut');
      expect(await failureCode(gatewayStatus(member.clientUrl, 1_000))).toBe('ECONNREFUSED');
      expect((await gatewayStatus(member.directUrl, 1_000)).memberId).toBe(member.id);
      await lab.fault('d1', 'heal');
      expect((await gatewayStatus(member.clientUrl, 1_000)).memberId).toBe(member.id);

      await lab.signal('d1', 'stop');
      // SIGSTOP is delivered asynchronously: a loaded machine may answer one call in between. The
      // kernel's own word (state T in /proc) says the member stopped; from then on nothing answers.
      await waitFor(async () => (processState(etcdPid) === 'T' ? true : undefined), { timeoutMs: 5_000, what: `etcd ${etcdPid} stopped` });
      expect(await failureCode(gatewayStatus(member.directUrl, 300))).toBe('ETIMEDOUT');
      await lab.signal('d1', 'cont');
      expect((await gatewayStatus(member.directUrl, 1_000)).memberId).toBe(member.id);

      await lab.down();
    } finally {
      if (fs.existsSync(stateFile)) await attachLab(stateFile).down();
    }
    expect(isAlive(daemonPid)).toBe(false);
    expect(isAlive(etcdPid)).toBe(false);
    expect(fs.existsSync(started.state.root)).toBe(false);
    expect(fs.existsSync(stateFile)).toBe(false);
  });

  it('down still kills the members by pid when the daemon is gone', async () => {
    const stateFile = path.join(workDir, 'orphan.json');
    const started = await spawnLabDaemon(stateFile, { members: 1 });
    const etcdPid = started.member('etcd1').pid;
    try {
      process.kill(started.state.ownerPid, 'SIGKILL');
      await waitFor(async () => (isAlive(started.state.ownerPid) ? undefined : true), { timeoutMs: 5_000, what: 'daemon gone' });
      expect(isAlive(etcdPid)).toBe(true);
    } finally {
      // The orphaned etcd must go even if a check above failed.
      await attachLab(stateFile).down(2_000);
    }
    await waitFor(async () => (isAlive(etcdPid) ? undefined : true), { timeoutMs: 5_000, what: `etcd ${etcdPid} gone` });
    expect(fs.existsSync(started.state.root)).toBe(false);
    expect(fs.existsSync(stateFile)).toBe(false);
  });
});
