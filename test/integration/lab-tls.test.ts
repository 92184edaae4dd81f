// The lab with client TLS, as kubeadm runs etcd: https client URLs, --client-cert-auth, a server
// certificate naming 127.0.0.1 and localhost. A real etcdctl is the client.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewayStatus } from '../../infra/lab/etcd-gateway.ts';
import { attachLab, spawnLabDaemon } from '../../infra/lab/lab-attach.ts';
import { startLab, type Lab, type LabTlsFiles } from '../../infra/lab/lab.ts';
import { isAlive } from '../../infra/lab/pids.ts';

const run = promisify(execFile);
const ETCDCTL = process.env.ETCDCTL_BIN ?? 'etcdctl';

interface Ctl {
  code: number;
  stdout: string;
  stderr: string;
}

/** etcdctl against one endpoint; its exit code and output, never a throw. */
async function etcdctl(endpoint: string, tlsFlags: string[], ...args: string[]): Promise<Ctl> {
  try {
    const { stdout, stderr } = await run(ETCDCTL, [`--endpoints=${endpoint}`, '--dial-timeout=2s', '--command-timeout=2s', ...tlsFlags, ...args], {
      env: { ...process.env, ETCDCTL_API: '3' },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof failed.code === 'number' ? failed.code : -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

const withClientCert = (tls: LabTlsFiles): string[] => [`--cacert=${tls.caFile}`, `--cert=${tls.certFile}`, `--key=${tls.keyFile}`];

/** The member id `endpoint status -w json` reports, in hex (read as text: it is a uint64). */
const memberIdOf = (ctl: Ctl): string => {
  const decimal = /"member_id":(\d+)/.exec(ctl.stdout)?.[1];
  return decimal === undefined ? `no member_id in ${ctl.stdout}` : BigInt(decimal).toString(16);
};

describe('lab with client TLS', () => {
  let lab: Lab;
  let tls: LabTlsFiles;

  beforeAll(async () => {
    lab = await startLab({ members: 3, tls: true });
    tls = lab.tls!;
  });

  afterAll(async () => {
    await lab?.down();
  });

  it('serves https on every client URL, and the lab asks its own questions with its client certificate', async () => {
    expect(lab.tls).toBeDefined();
    for (const member of lab.members) {
      expect(member.clientUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      expect(member.directUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      // Peers stay plain http on loopback.
      expect(member.peerUrl).toMatch(/^http:\/\//);
    }
    const leader = await lab.leader();
    expect((await lab.memberList()).map((m) => m.id).sort()).toEqual(lab.members.map((m) => m.id).sort());
    expect((await lab.status(lab.members[0]!.name)).leaderId).toBe(leader.id);
  });

  it('answers a client with a certificate of its CA, through the fault proxy', async () => {
    for (const member of lab.members) {
      const answer = await etcdctl(member.clientUrl, withClientCert(tls), 'endpoint', 'status', '-w', 'json');
      expect(answer.code, answer.stderr).toBe(0);
      expect(memberIdOf(answer)).toBe(member.id);
    }
  });

  it('names localhost in its server certificates, as kubeadm does', async () => {
    const member = lab.members[1]!;
    const viaLocalhost = member.clientUrl.replace('127.0.0.1', 'localhost');
    const answer = await etcdctl(viaLocalhost, withClientCert(tls), 'endpoint', 'status', '-w', 'json');
    expect(answer.code, answer.stderr).toBe(0);
    expect(memberIdOf(answer)).toBe(member.id);
  });

  it('refuses a client without a certificate, and a plain-http one', async () => {
    const member = lab.members[0]!;
    const anonymous = await etcdctl(member.clientUrl, [`--cacert=${tls.caFile}`], 'endpoint', 'status');
    expect(anonymous.code).not.toBe(0);
    // etcdctl only sees the connection closed; the member says why.
    expect(anonymous.stderr).toContain(`Failed to get the status of endpoint ${member.clientUrl}`);
    expect(fs.readFileSync(member.logFile, 'utf8')).toContain("client didn't provide a certificate");
    await expect(gatewayStatus(member.clientUrl.replace('https:', 'http:'), 1_000)).rejects.toThrow(/ECONNRESET|HTTP 400/);
  });

  it('gives a learner its own server certificate', async () => {
    const learner = await lab.addLearner();
    expect(learner.clientUrl).toMatch(/^https:/);
    const answer = await etcdctl(learner.clientUrl, withClientCert(tls), 'endpoint', 'status', '-w', 'json');
    expect(answer.code, answer.stderr).toBe(0);
    expect(memberIdOf(answer)).toBe(learner.id);
  });
});

describe('lab daemon with client TLS', () => {
  let workDir: string;

  beforeAll(() => {
    workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lab-daemon-tls-'));
  });

  afterAll(() => {
    fs.rmSync(workDir, { recursive: true, force: true });
  });

  it('names its PKI in the state file, so a later command asks the members over TLS', async () => {
    const stateFile = path.join(workDir, 'lab.json');
    const started = await spawnLabDaemon(stateFile, { members: 1, tls: true });
    const daemonPid = started.state.ownerPid;
    try {
      const lab = attachLab(stateFile);
      const files = lab.state.tls;
      expect(files).toBeDefined();
      const member = lab.member('etcd1');
      expect(member.clientUrl).toMatch(/^https:/);
      expect((await lab.memberList()).map((m) => m.id)).toEqual([member.id]);
      expect((await lab.leader()).name).toBe('etcd1');
      const answer = await etcdctl(member.clientUrl, withClientCert(files!), 'endpoint', 'status', '-w', 'json');
      expect(answer.code, answer.stderr).toBe(0);
      await lab.down();
    } finally {
      if (fs.existsSync(stateFile)) await attachLab(stateFile).down();
    }
    expect(isAlive(daemonPid)).toBe(false);
    expect(fs.existsSync(started.state.root)).toBe(false);
  });
});
