// The member client against a real etcd with authentication enabled: a token on every call,
// fetched again once etcd no longer takes it, the admin check etcd gates MemberRemove on, and
// a failed token call said as what it was (refused, or the credentials).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemberClient, type ClosableMemberClient } from '../../../functions/adapters/etcd/member-client.ts';
import type { EtcdUser } from '../../../functions/ports/etcd.ts';
import { failureOf, refusedEndpoint, startSingleEtcd, type SingleEtcd } from './single-etcd.ts';

const CALL_MS = 2_000;
const root: EtcdUser = { username: 'root', password: 'adapter-root-Vb3' };

describe('member client on etcd with authentication enabled', () => {
  let etcd: SingleEtcd;
  const clients: ClosableMemberClient[] = [];
  const client = (auth?: EtcdUser, endpoint = etcd.endpoint) => {
    const c = createMemberClient({ endpoint, path: 'direct' }, auth ? { auth } : {});
    clients.push(c);
    return c;
  };
  const asRoot = ['--user', `${root.username}:${root.password}`];
  beforeAll(async () => {
    etcd = await startSingleEtcd();
    await etcd.etcdctl('role', 'add', 'root');
    await etcd.etcdctl('user', 'add', `${root.username}:${root.password}`);
    await etcd.etcdctl('user', 'grant-role', 'root', 'root');
  }, 60_000);
  afterAll(async () => {
    for (const c of clients) c.close();
    await etcd?.stop();
  });

  it('with authentication off, anyone may change the membership', async () => {
    await expect(client().checkAdminPermission(CALL_MS)).resolves.toBeUndefined();
  });

  it('with it on: no user is refused the admin check, though etcd 3.4 still answers its status', async () => {
    await etcd.etcdctl('auth', 'enable');
    const anonymous = client();
    await expect(anonymous.status(CALL_MS)).resolves.toMatchObject({ leaderId: expect.any(String) });
    expect(await failureOf(anonymous.checkAdminPermission(CALL_MS))).toMatchObject({ kind: 'auth', message: expect.stringContaining('user name is empty') });
  });

  it('root passes, and again after etcd dropped every token (auth off and on)', async () => {
    const admin = client(root);
    await expect(admin.checkAdminPermission(CALL_MS)).resolves.toBeUndefined();
    await etcd.etcdctl(...asRoot, 'auth', 'disable');
    await etcd.etcdctl(...asRoot, 'auth', 'enable');
    await expect(admin.checkAdminPermission(CALL_MS)).resolves.toBeUndefined();
    await expect(admin.memberList(CALL_MS)).resolves.toMatchObject({ members: [expect.objectContaining({ name: 'solo' })] });
  });

  it('a wrong password fails every call on the credentials, naming the user and never the password', async () => {
    const failure = await failureOf(client({ username: 'root', password: 'wrong-password-Jj9' }).status(CALL_MS));
    expect(failure.kind).toBe('auth');
    expect(failure.message).toContain('authentication failed');
    expect(failure.message).toContain('authenticating as etcd user root');
    expect(failure.message).not.toContain('wrong-password-Jj9');
  });

  it('a member nobody listens on is refused, not a credential problem', async () => {
    const failure = await failureOf(client(root, await refusedEndpoint()).status(CALL_MS));
    expect(failure.kind).toBe('refused');
  });
});
