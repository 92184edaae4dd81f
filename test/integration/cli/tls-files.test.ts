// A wrong CA, certificate or key names the file that is wrong: at start-up where the file alone
// tells (not PEM, a key that is not the certificate's), and at call time where only the server can
// tell (a CA that did not sign its certificate, a client certificate its CA did not sign). The
// same for `run`'s config, with the config's field names.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCerts, startSingleEtcd, type CertSet, type SingleEtcd } from '../adapters/single-etcd.ts';
import { killService, runCli, startCli } from './support.ts';

describe('wrong TLS files are named', () => {
  let dir: string;
  let server: CertSet;
  let other: CertSet;
  let notPem: string;
  let etcd: SingleEtcd;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-tls-files-'));
    server = await makeCerts(dir, 'server');
    other = await makeCerts(dir, 'other');
    notPem = path.join(dir, 'not-pem.txt');
    fs.writeFileSync(notPem, 'this is not a PEM file\n');
    etcd = await startSingleEtcd({ certs: server });
  }, 60_000);
  afterAll(async () => {
    await etcd?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const probe = (files: { ca: string; cert: string; key: string }) =>
    runCli(['probe', '--endpoints', etcd.endpoint, `--cacert=${files.ca}`, `--cert=${files.cert}`, `--key=${files.key}`, '--timeout', '1s']);
  const secret = (set: CertSet) =>
    fs
      .readFileSync(set.keyFile, 'utf8')
      .split('\n')
      .filter((l) => l && !l.startsWith('-----'));

  it("at start-up: a CA that is not PEM, a key that is not PEM, a key that is not the certificate's (exit 2, one line)", async () => {
    const cases = [
      { files: { ca: notPem, cert: server.certFile, key: server.keyFile }, says: `--cacert ${notPem}: is not a PEM certificate` },
      { files: { ca: server.caFile, cert: notPem, key: server.keyFile }, says: `--cert ${notPem}: is not a PEM certificate` },
      { files: { ca: server.caFile, cert: server.certFile, key: notPem }, says: `--key ${notPem}: is not a PEM private key` },
      {
        files: { ca: server.caFile, cert: server.certFile, key: other.keyFile },
        says: `--key ${other.keyFile}: does not match the certificate in --cert ${server.certFile}`,
      },
      // A certificate given as the key: PEM, but no private key.
      { files: { ca: server.caFile, cert: server.certFile, key: server.certFile }, says: `--key ${server.certFile}: is not a PEM private key` },
      {
        files: { ca: path.join(dir, 'missing.pem'), cert: server.certFile, key: server.keyFile },
        says: `--cacert ${path.join(dir, 'missing.pem')}: cannot read: ENOENT`,
      },
      // The key's PEM pasted where its path belongs: named, never echoed.
      {
        files: { ca: server.caFile, cert: server.certFile, key: fs.readFileSync(server.keyFile, 'utf8') },
        says: '--key (not shown): is PEM text or a very long value, not a file path',
      },
    ];
    for (const { files, says } of cases) {
      const run = await probe(files);
      expect(run.code, run.stderr).toBe(2);
      expect(
        run.stderr
          .trimEnd()
          .split('\n')
          .filter((l) => !/DeprecationWarning|trace-deprecation/.test(l)),
      ).toHaveLength(1);
      expect(run.stderr).toContain(says);
      for (const line of [...secret(server), ...secret(other)]) expect(run.stderr + run.stdout).not.toContain(line);
    }
  });

  it("at call time: a CA that did not sign the server's certificate names --cacert; a client certificate the server's CA did not sign names --cert", async () => {
    const wrongCa = await probe({ ca: other.caFile, cert: server.certFile, key: server.keyFile });
    expect(wrongCa.stdout).toContain('failed the TLS handshake');
    expect(wrongCa.stdout).toContain(`the server's certificate is not signed by the CA in --cacert ${other.caFile}: fix --cacert ${other.caFile}`);

    const wrongClient = await probe({ ca: server.caFile, cert: other.certFile, key: other.keyFile });
    expect(wrongClient.stdout).toContain('failed the TLS handshake');
    expect(wrongClient.stdout).toContain(
      `the server refused the client certificate --cert ${other.certFile} (with --key ${other.keyFile}): it is not signed by a CA the server trusts; fix --cert ${other.certFile}`,
    );

    const right = await probe({ ca: server.caFile, cert: server.certFile, key: server.keyFile });
    expect(right.code, right.stderr).toBe(0);
  });

  it("in run's config, the field and the path, at start-up", async () => {
    fs.copyFileSync(notPem, path.join(dir, 'bad-ca.pem'));
    const config = (name: string, tls: object) => {
      const file = path.join(dir, `${name}.json`);
      fs.writeFileSync(
        file,
        JSON.stringify({
          state: `${name}.sqlite`,
          listen: '127.0.0.1:0',
          insecureNoAuth: true,
          clusters: [{ clusterId: 'lab', endpoints: [etcd.endpoint], tls }],
        }),
      );
      return file;
    };
    const cases = [
      { tls: { cacert: 'bad-ca.pem' }, says: 'clusters[0].tls.cacert bad-ca.pem: is not a PEM certificate' },
      {
        tls: { cacert: server.caFile, cert: server.certFile, key: other.keyFile },
        says: `clusters[0].tls.key ${other.keyFile}: does not match the certificate in clusters[0].tls.cert ${server.certFile}`,
      },
      { tls: { cacert: server.caFile, cert: server.certFile, key: 'bad-ca.pem' }, says: 'clusters[0].tls.key bad-ca.pem: is not a PEM private key' },
    ];
    for (const [i, { tls, says }] of cases.entries()) {
      const run = await runCli(['run', '--config', config(`bad-${i}`, tls)]);
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toContain(says);
    }
  });
});

describe('wrong TLS files are named at call time by remediate and run', () => {
  let dir: string;
  let server: CertSet;
  let other: CertSet;
  let etcd: SingleEtcd;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-tls-call-'));
    server = await makeCerts(dir, 'server');
    other = await makeCerts(dir, 'other');
    etcd = await startSingleEtcd({ certs: server });
  }, 60_000);
  afterAll(async () => {
    await etcd?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("remediate with a client certificate the server's CA did not sign", async () => {
    const run = await runCli(
      [
        'remediate',
        '--endpoints',
        etcd.endpoint,
        '--cacert',
        server.caFile,
        '--cert',
        other.certFile,
        '--key',
        other.keyFile,
        '--target',
        'solo',
        '--timeout',
        '1s',
        '--state',
        path.join(dir, 'r.sqlite'),
        '--json',
      ],
      { timeoutMs: 60_000 },
    );
    expect(run.code, run.stderr).toBe(3);
    const result = JSON.parse(run.stdout) as { reason: string; message: string };
    expect(result.reason).toBe('TLS_FAILED');
    expect(result.message).toContain(
      `the server refused the client certificate --cert ${other.certFile} (with --key ${other.keyFile}): it is not signed by a CA the server trusts; fix --cert ${other.certFile}`,
    );
  }, 70_000);

  it("run with a CA that did not sign the server's certificate", async () => {
    fs.copyFileSync(other.caFile, path.join(dir, 'ca.pem'));
    const config = path.join(dir, 'run.json');
    fs.writeFileSync(
      config,
      JSON.stringify({
        state: 'run.sqlite',
        listen: '127.0.0.1:0',
        token: 'tls-call-token-0123456789abcdef',
        clusters: [{ clusterId: 'lab', endpoints: [etcd.endpoint], tls: { cacert: 'ca.pem', cert: server.certFile, key: server.keyFile } }],
      }),
    );
    const s = startCli(['run', '--config', config]);
    try {
      await s.waitForStderr(/listening on /);
      s.child.stdin!.write(
        `${JSON.stringify({ clusterId: 'lab', target: { memberName: 'solo' }, reason: 'test', source: 'test', observedAt: new Date().toISOString() })}\n`,
      );
      await s.until(() => (s.stdout().includes('"outcome":"blocked"') ? true : undefined), 'run to report the block', 30_000);
      const result = JSON.parse(s.stdout().trim().split('\n').at(-1)!) as { reason: string; message: string };
      expect(result.reason).toBe('TLS_FAILED');
      expect(result.message).toContain("the server's certificate is not signed by the CA in clusters[0].tls.cacert ca.pem: fix clusters[0].tls.cacert ca.pem");
      s.child.kill('SIGTERM');
      expect(await s.exited).toBe(0);
    } finally {
      await killService(s);
    }
  }, 70_000);
});
