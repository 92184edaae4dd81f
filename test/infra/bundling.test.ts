// The bundles as Lambda runs them, built by the stack's own build (infra/build/function-build.ts):
// what each carries, read from esbuild's metafile, and that they run in a fresh Node process. A
// function carries only what it calls: schedule-retry, step-failed and the intake no etcd or
// Kubernetes client at all, the pipeline functions each only in a chunk loaded on first need;
// etcd3's protos precompiled, zod in English only.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Metafile } from 'esbuild';
import { fromJSON, loadSync } from '@grpc/proto-loader';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundlingOptions, ESM_BANNER } from '../../infra/cdk/bundling.ts';
import { ETCD3_LOAD_OPTIONS, etcd3Descriptor, etcd3RpcProto } from '../../infra/build/etcd3-descriptor.ts';
import { buildFunction } from '../../infra/build/function-build.ts';
import { asNamespaceImport } from '../../infra/build/zod-namespace.ts';
import { filesLoadedWith, inputsOf, loadedLater, loadedWith } from '../../infra/build/bundle-graph.ts';
import { stackFunctionNames, functionSpecs } from '../../infra/cdk/function-specs.ts';
import { lambdaEntry, repoRoot } from '../../infra/cdk/repo-paths.ts';

const fixture = (name: string): string => new URL(`./fixtures/${name}`, import.meta.url).pathname;
const packageIn = (input: string): string | undefined => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input)?.[1];
const packagesIn = (inputs: readonly string[]): Set<string> => new Set(inputs.map(packageIn).filter((p): p is string => p !== undefined));
const ETCD_OR_KUBE = ['etcd3', '@grpc/grpc-js', '@grpc/proto-loader', '@kubernetes/client-node'];
/** The functions that never talk to a cluster: step-failed carries out an outbox and resumes or blocks. */
const NO_CLUSTER: readonly string[] = ['schedule-retry', 'step-failed', 'intake'];

const runIn = (file: string, call: string): string =>
  execFileSync(
    process.execPath,
    ['--input-type=module', '-e', `const m = await import(${JSON.stringify(pathToFileURL(file).href)}); process.stdout.write(${call});`],
    {
      encoding: 'utf8',
      stdio: 'pipe',
    },
  );

let dir: string;
const built = new Map<string, { outdir: string; metafile: Metafile }>();
const index = (name: string): string => join(built.get(name)!.outdir, 'index.mjs');

async function buildInto(name: string, entry: string): Promise<void> {
  const outdir = join(dir, name);
  const metafile = await buildFunction(entry, outdir, { metafile: true });
  if (!metafile) throw new Error(`no metafile for ${name}`);
  built.set(name, { outdir, metafile });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bundle-'));
  for (const name of stackFunctionNames) await buildInto(name, lambdaEntry(name));
  await buildInto('etcd3-fixture', fixture('etcd3-entry.ts'));
  await buildInto('kube-fixture', fixture('kube-chunk-entry.ts'));
  await buildInto('etcd-fixture', fixture('etcd-chunk-entry.ts'));
  await buildInto('zod-fixture', fixture('zod-entry.ts'));
}, 180_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('what each function bundles', () => {
  it.each(NO_CLUSTER)('%s carries no etcd, gRPC or Kubernetes code, in any file', (name) => {
    const { metafile } = built.get(name)!;
    const all = packagesIn(inputsOf(metafile, Object.keys(metafile.outputs)));
    expect(ETCD_OR_KUBE.filter((p) => all.has(p))).toEqual([]);
  });

  it.each(stackFunctionNames.filter((name) => functionSpecs[name].pipeline && !NO_CLUSTER.includes(name)))(
    '%s loads the etcd and Kubernetes clients only in chunks loaded later, never with index.mjs',
    (name) => {
      const { metafile } = built.get(name)!;
      const first = packagesIn(inputsOf(metafile, loadedWith(metafile, index(name))));
      const later = packagesIn(inputsOf(metafile, loadedLater(metafile, index(name))));
      expect(ETCD_OR_KUBE.filter((p) => first.has(p))).toEqual([]);
      expect(later.has('@kubernetes/client-node')).toBe(true);
      expect(later.has('etcd3')).toBe(true);
      expect(later.has('@grpc/grpc-js')).toBe(true);
    },
  );

  it('the intake carries no Secrets Manager client; the others load it only in a chunk, on the first secret read', () => {
    const secrets = '@aws-sdk/client-secrets-manager';
    const intake = built.get('intake')!.metafile;
    expect(packagesIn(inputsOf(intake, Object.keys(intake.outputs))).has(secrets)).toBe(false);
    for (const name of stackFunctionNames.filter((n) => n !== 'intake')) {
      const { metafile } = built.get(name)!;
      expect(packagesIn(inputsOf(metafile, loadedWith(metafile, index(name)))).has(secrets)).toBe(false);
      expect(packagesIn(inputsOf(metafile, loadedLater(metafile, index(name)))).has(secrets)).toBe(true);
    }
  });

  it('no function loads the S3 client at its cold start; remediate loads it in a chunk of its own, when it takes a snapshot', () => {
    const s3 = '@aws-sdk/client-s3';
    for (const name of stackFunctionNames) {
      const { metafile } = built.get(name)!;
      expect(packagesIn(inputsOf(metafile, loadedWith(metafile, index(name)))).has(s3), name).toBe(false);
    }
    const { metafile } = built.get('remediate')!;
    const chunks = loadedLater(metafile, index('remediate')).filter((path) => packagesIn(Object.keys(metafile.outputs[path]!.inputs)).has(s3));
    expect(chunks.length).toBeGreaterThan(0);
    for (const chunk of chunks)
      expect(
        Object.keys(metafile.outputs[chunk]!.inputs).some((input) => input.endsWith('etcd-chunk.ts') || input.includes('node_modules/etcd3/')),
        chunk,
      ).toBe(false);
    expect(Object.values(metafile.outputs).some((o) => Object.keys(o.inputs).some((input) => input.endsWith('aws-wiring/snapshots-chunk.ts')))).toBe(true);
  });

  it('the files a cold start loads, read from the bundle itself, are those the metafile names', () => {
    for (const name of stackFunctionNames) {
      const { metafile } = built.get(name)!;
      const fromMetafile = loadedWith(metafile, index(name)).map((path) => join(repoRoot, path));
      expect(filesLoadedWith(index(name)).sort()).toEqual(fromMetafile.sort());
      expect(fromMetafile.length).toBeGreaterThan(1);
    }
  });

  it('every chunk sits beside index.mjs, and no .proto file is needed', () => {
    for (const name of stackFunctionNames) {
      const { metafile, outdir } = built.get(name)!;
      for (const path of Object.keys(metafile.outputs)) expect(relative(outdir, join(repoRoot, path))).not.toContain('/');
      expect(readdirSync(outdir).filter((f) => f.endsWith('.proto') || f === 'proto')).toEqual([]);
    }
  });

  it('zod carries its English messages and no other locale', () => {
    const { metafile } = built.get('probe-members')!;
    const locales = inputsOf(metafile, Object.keys(metafile.outputs)).filter((input) => input.includes('node_modules/zod/v4/locales/'));
    expect(locales.map((input) => input.split('/').pop())).toEqual(['en.js']);
  });

  it("keeps only the parts of zod's namespace the code names (its JSON Schema converters are not among them)", () => {
    const { metafile } = built.get('probe-members')!;
    const inputs = inputsOf(metafile, Object.keys(metafile.outputs));
    expect(inputs.some((input) => input.includes('node_modules/zod/v4/classic/schemas.js'))).toBe(true);
    expect(inputs.filter((input) => /node_modules\/zod\/v4\/classic\/from-json-schema\.js$/.test(input))).toEqual([]);
    expect(asNamespaceImport("import { ZodError, z } from 'zod';\nimport { type ZodType } from 'zod';", '/z.js')).toBe(
      'import * as z from "/z.js"; import { ZodError} from "/z.js";\nimport { type ZodType } from \'zod\';',
    );
  });

  it("words a malformed event's problems as the unbundled zod does", async () => {
    const { handler } = await import('./fixtures/zod-entry.ts');
    const unbundled = await handler();
    expect(unbundled).toContain('expected string');
    expect(runIn(index('zod-fixture'), 'await m.handler()')).toBe(unbundled);
  });
});

describe('etcd3 in a bundle', () => {
  it('is handed a package definition from the precompiled descriptor equal to the one its .proto files give', () => {
    const parsed = loadSync(etcd3RpcProto(), ETCD3_LOAD_OPTIONS);
    const precompiled = fromJSON(etcd3Descriptor(), ETCD3_LOAD_OPTIONS);
    expect(Object.keys(precompiled).sort()).toEqual(Object.keys(parsed).sort());
    // Each service's methods, paths and message shapes; each message's descriptor.
    const shape = (definition: typeof parsed) => JSON.parse(JSON.stringify(definition)) as unknown;
    expect(shape(precompiled)).toEqual(shape(parsed));
    expect(Object.keys(parsed)).toContain('etcdserverpb.KV');
  });

  it('loads from the bundle alone and makes a client, in a fresh Node process', () => {
    expect(runIn(index('etcd3-fixture'), 'await m.handler()')).toBe('ok');
    expect(readdirSync(built.get('etcd3-fixture')!.outdir).some((f) => f.includes('proto'))).toBe(false);
  });
});

describe('the Kubernetes chunk', () => {
  it('loads from the bundle folder when the directory first returns a cluster with kube access', () => {
    const said = JSON.parse(runIn(index('kube-fixture'), 'await m.handler()')) as { before: string; after: string };
    expect(said.before).toMatch(/the Kubernetes client is loaded when the directory returns a cluster with kube access/);
    expect(said.after).toBe('built');
  });

  it('is a file of its own, so the test above proves it is read from the bundle folder', () => {
    const { metafile, outdir } = built.get('kube-fixture')!;
    const later = loadedLater(metafile, index('kube-fixture')).filter((path) =>
      packagesIn(Object.keys(metafile.outputs[path]!.inputs)).has('@kubernetes/client-node'),
    );
    expect(later.length).toBeGreaterThan(0);
    for (const path of later) rmSync(join(repoRoot, path));
    expect(existsSync(join(outdir, 'index.mjs'))).toBe(true);
    expect(() => runIn(index('kube-fixture'), 'await m.handler()')).toThrow(/Cannot find module .*kube-chunk/);
  });
});

describe('the etcd chunk', () => {
  it('loads from the bundle folder once the directory returns an entry, not before, not for an entry it refused', () => {
    const said = JSON.parse(runIn(index('etcd-fixture'), 'await m.handler()')) as Record<string, string>;
    const rule = /the etcd client is loaded when the directory returns a cluster's entry/;
    expect(said.before).toMatch(rule);
    expect(said.refused).toBe('Error: refused');
    expect(said.afterRefused).toMatch(rule);
    expect(said.after).toBe('built');
  });

  it('is a file of its own, so the test above proves it is read from the bundle folder', () => {
    const { metafile, outdir } = built.get('etcd-fixture')!;
    const later = loadedLater(metafile, index('etcd-fixture')).filter((path) =>
      Object.keys(metafile.outputs[path]!.inputs).some((input) => input.endsWith('etcd-chunk.ts')),
    );
    expect(later.length).toBe(1);
    for (const path of later) rmSync(join(repoRoot, path));
    expect(existsSync(join(outdir, 'index.mjs'))).toBe(true);
    expect(() => runIn(index('etcd-fixture'), 'await m.handler()')).toThrow(/Cannot find module .*etcd-chunk/);
  });
});

describe('the stack bundling', () => {
  it('runs the local esbuild, never Docker, for ESM on Node 24 with the SDK inside, and the split build as its hook', () => {
    const options = bundlingOptions(lambdaEntry('probe-members'));
    expect(options).toMatchObject({ forceDockerBundling: false, format: 'esm', target: 'node24', bundleAwsSDK: true });
    const hook = options.commandHooks!.afterBundling('/in', '/out').join(' ');
    expect(hook).toContain('infra/build/bundle-function.ts');
    expect(hook).toContain(lambdaEntry('probe-members'));
    expect(ESM_BANNER).toContain('const require = ');
  });
});
