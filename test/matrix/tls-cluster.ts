// The mTLS cluster of test/integration/e2e/tls-cluster.ts (etcd members serving clients only over
// TLS and only to holders of a client certificate, each behind a fault proxy), shaped as the part
// of a Lab the matrix harness uses, so case 17 (a wrong client certificate) runs through runCase too.
import fs from 'node:fs';
import path from 'node:path';
import type { TlsFiles } from '../../functions/ports/etcd.ts';
import type { Lab, LabMember, LabMemberInfo } from '../../infra/lab/lab.ts';
import { makeCerts, type CertSet } from '../integration/adapters/single-etcd.ts';
import { CALL_MS, startTlsCluster, type TlsMember } from '../integration/e2e/tls-cluster.ts';

export interface TlsLab {
  /** The part of a Lab the harness and the case use. */
  lab: Lab;
  /** The cluster's CA and a client certificate it trusts. */
  certs: CertSet;
  /** A CA and certificate of another PKI, which the cluster does not trust. */
  rogue: CertSet;
}

const asLabMember = (m: TlsMember): LabMember => ({
  name: m.name,
  id: m.id,
  clientUrl: m.clientUrl,
  directUrl: m.directUrl,
  peerUrl: m.peerUrl,
  directPeerUrl: m.peerUrl,
  pid: m.child.pid ?? -1,
  dataDir: m.dataDir,
  logFile: m.logFile,
  isLearner: false,
  proxy: m.proxy,
});

export async function startTlsLab(count = 3): Promise<TlsLab> {
  const cluster = await startTlsCluster(count);
  try {
    const rogueDir = path.join(cluster.root, 'rogue');
    fs.mkdirSync(rogueDir);
    const rogue = await makeCerts(rogueDir, 'rogue');
    const members = cluster.members.map(asLabMember);
    const memberList = async (): Promise<LabMemberInfo[]> => {
      for (const m of members) {
        try {
          return (await cluster.admin.client({ endpoint: m.directUrl, path: 'direct' }).memberList(CALL_MS)).members;
        } catch {
          // the next
        }
      }
      throw new Error('no member answered member list');
    };
    const leader = async (): Promise<LabMember> => {
      const found = await cluster.leader();
      return members.find((m) => m.name === found.name)!;
    };
    const lab = {
      members,
      electionTimeoutMs: 500,
      endpoints: () => cluster.endpoints(),
      member: (name: string) => members.find((m) => m.name === name)!,
      runState: () => 'running' as const,
      memberList,
      leader,
      down: () => cluster.down(),
    } satisfies Pick<Lab, 'members' | 'electionTimeoutMs' | 'endpoints' | 'member' | 'runState' | 'memberList' | 'leader' | 'down'>;
    return { lab: lab as unknown as Lab, certs: cluster.certs, rogue };
  } catch (error) {
    await cluster.down();
    throw error;
  }
}

/** The cluster's CA, with the rogue PKI's certificate and key: a client the cluster must refuse. */
export const wrongClientCert = (t: TlsLab): TlsFiles => ({ ca: t.certs.files.ca, cert: t.rogue.files.cert, key: t.rogue.files.key });
