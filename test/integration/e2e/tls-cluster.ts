// A 3-member etcd cluster that serves clients only over TLS and only to holders of a client
// certificate, each member behind a fault proxy (TLS passes through it, as through a port-forward).
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createEtcd3Transport } from '../../../functions/adapters/etcd/index.ts';
import type { MemberStatus } from '../../../functions/core/common/types.ts';
import type { EtcdTransport } from '../../../functions/ports/etcd.ts';
import { WaitAborted, waitFor } from '../../../functions/lib/wait-for.ts';
import { logTail, resolveEtcdBin } from '../../../infra/lab/etcd-process.ts';
import { startFaultProxy, type FaultProxy } from '../../../infra/lab/fault-proxy.ts';
import { freePorts } from '../../../infra/lab/free-port.ts';
import { makeCerts, type CertSet } from '../adapters/single-etcd.ts';

export const CALL_MS = 1_000;

export interface TlsMember {
  name: string;
  id: string;
  /** What the cluster advertises and callers use: https through the member's fault proxy. */
  clientUrl: string;
  /** The member's real https port, for the test's own questions. */
  directUrl: string;
  peerUrl: string;
  dataDir: string;
  proxy: FaultProxy;
  child: ChildProcess;
  exited: Promise<void>;
  logFile: string;
}

export interface TlsCluster {
  root: string;
  certs: CertSet;
  members: TlsMember[];
  /** A client with the cluster's CA and client certificate, for the test's own questions. */
  admin: EtcdTransport;
  endpoints(): string[];
  statusOf(member: TlsMember): Promise<MemberStatus>;
  /** The leader every answering member agrees on, provided they are a majority of `members`. */
  leader(excluding?: string[]): Promise<TlsMember>;
  down(): Promise<void>;
}

/** Three etcd members with client TLS and --client-cert-auth; peers talk plain http on loopback. */
export async function startTlsCluster(count = 3): Promise<TlsCluster> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'etcd-mtls-'));
  const members: TlsMember[] = [];
  let admin: EtcdTransport | undefined;
  const down = async (): Promise<void> => {
    for (const m of members) if (m.child.exitCode === null && m.child.signalCode === null) m.child.kill('SIGKILL');
    await Promise.all(members.map((m) => m.exited));
    await Promise.all(members.map((m) => m.proxy.close()));
    await admin?.close();
    fs.rmSync(root, { recursive: true, force: true });
  };
  try {
    const certs = await makeCerts(root, 'cluster');
    const etcdBin = resolveEtcdBin();
    const ports = await freePorts(count * 2);
    const token = `mtls-${process.pid}-${Date.now()}`;
    const planned = await Promise.all(
      Array.from({ length: count }, async (_, i) => ({
        name: `etcd${i + 1}`,
        clientPort: ports[2 * i]!,
        peerUrl: `http://127.0.0.1:${ports[2 * i + 1]!}`,
        proxy: await startFaultProxy({ upstreamPort: ports[2 * i]! }),
      })),
    );
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
          '--name',
          p.name,
          '--data-dir',
          path.join(dir, 'data'),
          '--listen-client-urls',
          directUrl,
          '--advertise-client-urls',
          clientUrl,
          '--listen-peer-urls',
          p.peerUrl,
          '--initial-advertise-peer-urls',
          p.peerUrl,
          '--initial-cluster',
          initialCluster,
          '--initial-cluster-state',
          'new',
          '--initial-cluster-token',
          token,
          '--heartbeat-interval',
          '50',
          '--election-timeout',
          '500',
          '--strict-reconfig-check',
          '--cert-file',
          certs.certFile,
          '--key-file',
          certs.keyFile,
          '--trusted-ca-file',
          certs.caFile,
          '--client-cert-auth',
          '--logger',
          'zap',
          '--log-outputs',
          'stderr',
        ],
        // ETCD_* variables would configure the member behind the command line's back.
        { stdio: ['ignore', log, log], env: Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ETCD_'))) },
      );
      fs.closeSync(log);
      child.on('error', () => undefined);
      const exited = new Promise<void>((resolve) => {
        if (child.pid === undefined) resolve();
        else child.once('exit', () => resolve());
      });
      members.push({ name: p.name, id: '', clientUrl, directUrl, peerUrl: p.peerUrl, dataDir: path.join(dir, 'data'), proxy: p.proxy, child, exited, logFile });
    }
    const client = (admin = createEtcd3Transport({ tls: certs.files }));
    const statusOf = (m: TlsMember) => client.client({ endpoint: m.directUrl, path: 'direct' }).status(CALL_MS);
    const leader = async (excluding: string[] = []): Promise<TlsMember> => {
      const live = members.filter((m) => m.child.exitCode === null && m.child.signalCode === null);
      const answers = (await Promise.allSettled(live.map(statusOf))).flatMap((a) => (a.status === 'fulfilled' ? [a.value] : []));
      if (answers.length <= members.length / 2) throw new Error(`only ${answers.length} of ${members.length} members answered`);
      const leaders = new Set(answers.map((s) => s.leaderId));
      const found = members.find((m) => m.id !== '' && leaders.size === 1 && leaders.has(m.id));
      if (!found) throw new Error(`no agreed leader: ${[...leaders].join(', ')}`);
      if (excluding.includes(found.name)) throw new Error(`leader is still ${found.name}`);
      return found;
    };
    await waitFor(
      async () => {
        for (const m of members) {
          if (m.child.exitCode !== null || m.child.signalCode !== null) {
            throw new WaitAborted(`etcd member ${m.name} exited; log ends with:\n${logTail(m.logFile)}`);
          }
        }
        // Ids by name, once every member has started and published its name.
        const { members: listed } = await client.client({ endpoint: members[0]!.directUrl, path: 'direct' }).memberList(CALL_MS);
        for (const m of members) {
          const id = listed.find((l) => l.name === m.name)?.id;
          if (id === undefined) throw new Error(`${m.name} is not listed by name yet`);
          m.id = id;
        }
        return leader();
      },
      { timeoutMs: 30_000, what: `${count} TLS etcd members to answer and agree on a leader` },
    );
    return { root, certs, members, admin: client, endpoints: () => members.map((m) => m.clientUrl), statusOf, leader, down };
  } catch (error) {
    await down();
    throw error;
  }
}
