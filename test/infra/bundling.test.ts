// The bundle as Lambda runs it: one ESM file with the stack's banner and etcd3's protos copied the
// way the stack's afterBundling hook copies them. Importing it loads etcd3's protos from the path
// etcd3 computes from __dirname, and CommonJS dependencies find `require`.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundlingOptions, copyProtosCommand, ESM_BANNER } from '../../infra/cdk/bundling.ts';

let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bundle-'));
  const options = bundlingOptions();
  await build({
    entryPoints: [new URL('./fixtures/etcd3-entry.ts', import.meta.url).pathname],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: options.target,
    mainFields: options.mainFields,
    banner: { js: ESM_BANNER },
    outfile: join(dir, 'index.mjs'),
    logLevel: 'warning',
  });
  execFileSync('bash', ['-c', copyProtosCommand(dir)]);
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the ESM bundle', () => {
  it('imports etcd3, loads its protos from the bundle and makes a client, in a fresh Node process', () => {
    const script = `const m = await import(${JSON.stringify(pathToFileURL(join(dir, 'index.mjs')).href)}); process.stdout.write(await m.handler());`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(out).toBe('ok');
  });

  it('fails without the protos, so the test above proves where they are read from', () => {
    rmSync(join(dir, 'proto'), { recursive: true });
    const script = `await import(${JSON.stringify(pathToFileURL(join(dir, 'index.mjs')).href)});`;
    expect(() => execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', stdio: 'pipe' })).toThrow(/proto\/rpc\.proto/);
  });

  it('is bundled by the local esbuild, never Docker, as ESM for Node 24 with the SDK inside', () => {
    const options = bundlingOptions();
    expect(options).toMatchObject({ forceDockerBundling: false, format: 'esm', target: 'node24', bundleAwsSDK: true, banner: ESM_BANNER });
  });
});
