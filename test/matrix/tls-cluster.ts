// The mTLS lab of test/integration/e2e/mtls.test.ts (etcd members serving clients only over TLS
// and only to holders of a client certificate, each behind a fault proxy), shaped as the part of a
// Lab the matrix harness uses, so case 17 (a wrong client certificate) runs through runCase too.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createEtcd3Transport } from '../../functions/adapters/etcd/index.ts';
import type { EtcdTransport, TlsFiles } from '../../functions/ports/etcd.ts';
import { WaitAborted, waitFor } from '../../functions/shared/wait-for.ts';
import { logTail, resolveEtcdBin } from '../../infra/lab/etcd-process.ts';
import { startFaultProxy, type FaultProxy } from '../../infra/lab/fault-proxy.ts';
import { freePorts } from '../../infra/lab/free-port.ts';
import type { Lab, LabMember, LabMemberInfo } from '../../infra/lab/lab.ts';
import { makeCerts, type CertSet } from '../integration/adapters/single-etcd.ts';

const CALL_MS = 1_000;

export interface TlsLab {
  /** The part of a Lab the harness and the case use. */
  lab: Lab;
  /** The cluster's CA and a client certificate it trusts. */
  certs: CertSet;
  /** A CA and certificate of another PKI, which the cluster does not trust. */
  rogue: CertSet;
}

export async function startTlsLab(count = 3): Promise<TlsLab> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'etcd-mtls-matrix-'));
  const members: (LabMember & { child: ChildProcess; exited: Promise<void> })[] = [];
  let trusted: EtcdTransport | undefined;
  const down = async (): Promise<void> => {
    for (const m of members) if (m.child.exitCode === null && m.child.signalCode === null) m.child.kill('SIGKILL');
    await Promise.all(members.map((m) => m.exited));
    await Promise.all(members.map((m) => m.proxy.close()));
    await trusted?.close();
    fs.rmSync(root, { recursive: true, force: true });
  };
  try {
    const certs = await makeCerts(root, 'cluster');
    const rogueDir = path.join(root, 'rogue');
    fs.mkdirSync(rogueDir);
    const rogue = await makeCerts(rogueDir, 'rogue');
    const etcdBin = resolveEtcdBin();
    const ports = await freePorts(count * 2);
    const token = `mtls-matrix-${process.pid}-${Date.now()}`;
    const planned: { name: string; clientPort: number; peerUrl: string; proxy: FaultProxy }[] = [];
    for (let i = 0; i < count; i++) {
      planned.push({ name: `etcd${i + 1}`, clientPort: ports[2 * i]!, peerUrl: `http://127.0.0.1:${ports[2 * i + 1]!}`, proxy: await startFaultProxy({ upstreamPort: ports[2 * i]! }) });
    }
    const initialCluster = planned.map((p) => `${p.name}=${p.peerUrl}`).join(',');
    for (const p of planned) {
      const dir = path.join(root, p.name);
      fs.mkdirSync(dir);
      const logFile = path.join(dir, 'etcd.log');
      const clientUrl = `https://127.0.0.1:${p.proxy.port}`;
      const directUrl = `https://127.0.0.1:${p.clientPort}`;
      const log = fs.openSync(logFile, 'a');
      const child = spawn(
        etcdBin,
        [
          '--name', p.name,
          '--data-dir', path.join(dir, 'data'),
          '--listen-client-urls', directUrl,
          '--advertise-client-urls', clientUrl,
          '--listen-peer-urls', p.peerUrl,
          '--initial-advertise-peer-urls', p.peerUrl,
          '--initial-cluster', initialCluster,
          '--initial-cluster-state', 'new',
          '--initial-cluster-token', token,
          '--heartbeat-interval', '50',
          '--election-timeout', '500',
          '--strict-reconfig-check',
          '--cert-file', certs.certFile,
          '--key-file', certs.keyFile,
          '--trusted-ca-file', certs.caFile,
          '--client-cert-auth',
          '--logger', 'zap',
          '--log-outputs', 'stderr',
        ],
        { stdio: ['ignore', log, log], env: Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ETCD_'))) },
      );
      fs.closeSync(log);
      child.on('error', () => undefined);
      const exited = new Promise<void>((resolve) => {
        if (child.pid === undefined) resolve();
        else child.once('exit', () => resolve());
      });
      members.push({ name: p.name, id: '', clientUrl, directUrl, peerUrl: p.peerUrl, pid: child.pid ?? -1, dataDir: path.join(dir, 'data'), logFile, isLearner: false, proxy: p.proxy, child, exited });
    }
    const client = (trusted = createEtcd3Transport({ tls: certs.files }));
    const ask = (m: LabMember) => client.client({ endpoint: m.directUrl, path: 'direct' });
    const memberList = async (): Promise<LabMemberInfo[]> => {
      for (const m of members) {
        try {
          return (await ask(m).memberList(CALL_MS)).members;
        } catch {
          // the next
        }
      }
      throw new Error('no member answered member list');
    };
    const leader = async (): Promise<LabMember> => {
      const answers = (await Promise.allSettled(members.map((m) => ask(m).status(CALL_MS)))).flatMap((a) => (a.status === 'fulfilled' ? [a.value] : []));
      const leaders = new Set(answers.map((s) => s.leaderId));
      const found = members.find((m) => m.id !== '' && leaders.size === 1 && leaders.has(m.id));
      if (answers.length <= members.length / 2 || !found) throw new Error(`no agreed leader among ${answers.length} answers`);
      return found;
    };
    await waitFor(
      async () => {
        for (const m of members) if (m.child.exitCode !== null || m.child.signalCode !== null) throw new WaitAborted(`etcd member ${m.name} exited; log ends with:\n${logTail(m.logFile)}`);
        const listed = await memberList();
        for (const m of members) {
          const id = listed.find((l) => l.name === m.name)?.id;
          if (id === undefined) throw new Error(`${m.name} is not listed by name yet`);
          (m as { id: string }).id = id;
        }
        return leader();
      },
      { timeoutMs: 30_000, what: `${count} TLS etcd members to answer and agree on a leader` },
    );
    const lab = {
      members,
      electionTimeoutMs: 500,
      endpoints: () => members.map((m) => m.clientUrl),
      member: (name: string) => members.find((m) => m.name === name)!,
      runState: () => 'running' as const,
      memberList,
      leader,
      down,
    } satisfies Pick<Lab, 'members' | 'electionTimeoutMs' | 'endpoints' | 'member' | 'runState' | 'memberList' | 'leader' | 'down'>;
    return { lab: lab as unknown as Lab, certs, rogue };
  } catch (error) {
    await down();
    throw error;
  }
}

/** The cluster's CA, with the rogue PKI's certificate and key: a client the cluster must refuse. */
export const wrongClientCert = (t: TlsLab): TlsFiles => ({ ca: t.certs.files.ca, cert: t.rogue.files.cert, key: t.rogue.files.key });
