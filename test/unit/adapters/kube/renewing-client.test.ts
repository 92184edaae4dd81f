// A connection per certificate: a new one once the minted certificate is half through its life,
// and after a TLS failure, with the CA read again; a call still running ends on the old one.
import { describe, expect, it } from 'vitest';
import type { MemberStatus } from '../../../../functions/core/common/types.ts';
import { EtcdCallError, type EndpointTarget } from '../../../../functions/ports/etcd.ts';
import type { ClosableMemberClient, MemberClientOptions } from '../../../../functions/adapters/etcd/member-client.ts';
import type { ConnectionTls, EtcdClientCredentials } from '../../../../functions/adapters/kube/etcd-credentials.ts';
import { createRenewingClient } from '../../../../functions/adapters/kube/renewing-client.ts';

const STATUS = { leaderId: '1' } as MemberStatus;
const TARGET: EndpointTarget = { endpoint: 'kube-system/etcd-cp-1:2379', path: 'port-forward' };

interface Made {
  options: MemberClientOptions;
  closed: boolean;
  answer: () => Promise<MemberStatus>;
  /** Maintenance calls made on it, in order. */
  calls: string[];
}

function world() {
  let clock = 1_000_000;
  let minted = 0;
  let refreshed = 0;
  const made: Made[] = [];
  const credentials: EtcdClientCredentials = {
    forConnection: () => {
      minted += 1;
      const material: ConnectionTls = {
        tls: { ca: Buffer.from('ca'), cert: Buffer.from(`cert-${minted}`), key: Buffer.from(`key-${minted}`) },
        renewAt: clock + 30 * 60_000,
        advice: () => "the Secret must hold this cluster's etcd CA",
      };
      return Promise.resolve(material);
    },
    refresh: () => void (refreshed += 1),
  };
  const connect = (_target: EndpointTarget, options: MemberClientOptions): ClosableMemberClient => {
    const entry: Made = { options, closed: false, answer: () => Promise.resolve(STATUS), calls: [] };
    made.push(entry);
    const maintained = (call: string) => () => void entry.calls.push(call);
    return {
      ...TARGET,
      status: () => entry.answer(),
      compact: maintained('compact'),
      defragment: maintained('defragment'),
      disarmNoSpace: maintained('disarmNoSpace'),
      close: () => void (entry.closed = true),
    } as unknown as ClosableMemberClient;
  };
  const client = createRenewingClient(TARGET, {
    credentials,
    connect,
    now: () => clock,
    endpoint: (secure) => Promise.resolve(`${secure ? 'https' : 'http'}://127.0.0.1:40000`),
  });
  return { client, made, advance: (ms: number) => void (clock += ms), minted: () => minted, refreshed: () => refreshed };
}

describe('createRenewingClient', () => {
  it('keeps one connection until its certificate is half through its life, then makes a new one and closes the old', async () => {
    const w = world();
    await w.client.status(1_000);
    await w.client.status(1_000);
    expect(w.made).toHaveLength(1);
    expect(w.made[0]!.options.tls?.cert?.toString()).toBe('cert-1');
    w.advance(30 * 60_000);
    await w.client.status(1_000);
    expect(w.made).toHaveLength(2);
    expect(w.made[1]!.options.tls?.cert?.toString()).toBe('cert-2');
    expect(w.made[0]!.closed).toBe(true);
    expect((await w.client.current()).tls?.cert?.toString()).toBe('cert-2');
  });

  it('a call running on the old connection finishes there before it closes', async () => {
    const w = world();
    await w.client.status(1_000);
    let finish!: () => void;
    w.made[0]!.answer = () => new Promise((resolve) => (finish = () => resolve(STATUS)));
    const running = w.client.status(1_000);
    w.advance(30 * 60_000);
    await w.client.status(1_000);
    expect(w.made[0]!.closed).toBe(false);
    finish();
    await expect(running).resolves.toBe(STATUS);
    expect(w.made[0]!.closed).toBe(true);
  });

  it('a TLS failure reads the CA again, says what to fix, and the next call connects anew', async () => {
    const w = world();
    await w.client.status(1_000);
    w.made[0]!.answer = () => Promise.reject(new EtcdCallError({ kind: 'tls', message: 'unable to verify the first certificate' }));
    await expect(w.client.status(1_000)).rejects.toThrow("unable to verify the first certificate (the Secret must hold this cluster's etcd CA)");
    expect(w.refreshed()).toBe(1);
    expect(w.made[0]!.closed).toBe(true);
    await w.client.status(1_000);
    expect(w.made).toHaveLength(2);
  });

  it('any other failure keeps the connection and the CA', async () => {
    const w = world();
    await w.client.status(1_000);
    w.made[0]!.answer = () => Promise.reject(new EtcdCallError({ kind: 'refused', message: 'connect ECONNREFUSED' }));
    await expect(w.client.status(1_000)).rejects.toThrow(/^connect ECONNREFUSED$/);
    expect(w.refreshed()).toBe(0);
    expect(w.made[0]!.closed).toBe(false);
  });

  it('compacts, defragments and disarms on the connection of the moment, as every other call', async () => {
    const w = world();
    await w.client.compact!(42, 1_000);
    await w.client.defragment!(1_000);
    await w.client.disarmNoSpace!(1_000);
    expect(w.made).toHaveLength(1);
    expect(w.made[0]!.calls).toEqual(['compact', 'defragment', 'disarmNoSpace']);
  });
});
