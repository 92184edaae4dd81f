// Where a bundle's bytes and import time go. Bytes: esbuild's metafile of a build with the options
// CDK hands esbuild for the stack (infra/cdk/bundling.ts, as aws-lambda-nodejs turns them into
// flags), checked to come out the same size as the deployed asset, grouped by package. Time: small
// bundles of one dependency each, built the same way, imported alone in fresh processes.
import { execFileSync } from 'node:child_process';
import { mkdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { build, type BuildOptions, type Metafile } from 'esbuild';
import { bundlingOptions, copyProtosCommand } from '../../../infra/cdk/bundling.ts';
import { lambdaEntry, repoRoot } from '../../../infra/cdk/repo-paths.ts';

/** What aws-lambda-nodejs passes esbuild for our options (its buildEsbuildArgs), as the JS API takes them. */
function stackEsbuildOptions(outfile: string): BuildOptions {
  const o = bundlingOptions();
  return {
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: o.target,
    outfile,
    minify: o.minify,
    sourcemap: o.sourceMap,
    sourcesContent: o.sourcesContent,
    keepNames: o.keepNames,
    mainFields: o.mainFields,
    ...(o.banner ? { banner: { js: o.banner } } : {}),
    absWorkingDir: repoRoot,
    logLevel: 'warning',
    metafile: true,
  };
}

/** `node_modules/@smithy/core/dist/x.js` → `@smithy/core`; our own files by their top folder. */
export function packageOf(input: string): string {
  const at = input.lastIndexOf('node_modules/');
  if (at < 0) return `(ours) ${input.split('/')[0]}/`;
  const [first, second] = input.slice(at + 'node_modules/'.length).split('/');
  return first?.startsWith('@') ? `${first}/${second}` : (first ?? input);
}

export interface PackageBytes {
  name: string;
  bytes: number;
}

export interface InputBytes {
  path: string;
  bytes: number;
}

/** Each input of one output and the bytes it put there. The metafile's paths are relative to the repository. */
export function inputsOf(metafile: Metafile, outfile: string): InputBytes[] {
  const output = Object.entries(metafile.outputs).find(([path]) => resolve(repoRoot, path) === resolve(outfile))?.[1];
  if (!output) throw new Error(`no output ${outfile} in the metafile`);
  return Object.entries(output.inputs).map(([path, { bytesInOutput }]) => ({ path, bytes: bytesInOutput }));
}

/** Sums bytes by a key of each input, largest first. */
export function sumBy(inputs: readonly InputBytes[], key: (path: string) => string): PackageBytes[] {
  const sums = new Map<string, number>();
  for (const { path, bytes } of inputs) sums.set(key(path), (sums.get(key(path)) ?? 0) + bytes);
  return [...sums].map(([name, bytes]) => ({ name, bytes })).sort((a, b) => b.bytes - a.bytes);
}

/** Within one package, by folder: `zod/v4/locales/de.js` → `v4/locales/`. */
export function foldersOf(inputs: readonly InputBytes[], pkg: string): PackageBytes[] {
  const marker = `node_modules/${pkg}/`;
  const inside = inputs.filter((i) => packageOf(i.path) === pkg && i.path.includes(marker));
  return sumBy(inside, (path) => {
    const rest = path.slice(path.lastIndexOf(marker) + marker.length).split('/');
    return rest.length > 1 ? `${rest.slice(0, -1).join('/')}/` : rest[0]!;
  });
}

/** A function's entry built as the stack builds it: its size and what went into it. */
export async function analyseFunction(name: string, dir: string): Promise<{ bytes: number; inputs: InputBytes[] }> {
  const outfile = join(dir, name, 'index.mjs');
  const { metafile } = await build({ ...stackEsbuildOptions(outfile), entryPoints: [lambdaEntry(name)] });
  if (!metafile) throw new Error(`esbuild wrote no metafile for ${name}`);
  return { bytes: statSync(outfile).size, inputs: inputsOf(metafile, outfile) };
}

/** One dependency alone, for a coarse split of import time; each keeps what its import runs. */
export const PARTS: Record<string, string> = {
  etcd3: "export { Etcd3 } from 'etcd3';",
  'aws-sdk': [
    "export { DynamoDBClient } from '@aws-sdk/client-dynamodb';",
    "export { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';",
    "export { EventBridgeClient } from '@aws-sdk/client-eventbridge';",
    "export { SchedulerClient } from '@aws-sdk/client-scheduler';",
    "export { SQSClient } from '@aws-sdk/client-sqs';",
    "export { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';",
  ].join('\n'),
  'powertools+middy+zod': [
    "export { Logger } from '@aws-lambda-powertools/logger';",
    "export { Metrics } from '@aws-lambda-powertools/metrics';",
    "export { parser } from '@aws-lambda-powertools/parser/middleware';",
    "export { default as middy } from '@middy/core';",
    "export { z } from 'zod';",
  ].join('\n'),
};

/** Builds one part as the stack would bundle it, protos beside it; returns its index.mjs. */
export async function buildPart(part: string, dir: string): Promise<string> {
  const outDir = join(dir, `part-${part.replace(/[^a-z0-9]+/gi, '-')}`);
  mkdirSync(outDir, { recursive: true });
  const outfile = join(outDir, 'index.mjs');
  await build({ ...stackEsbuildOptions(outfile), metafile: false, stdin: { contents: PARTS[part]!, resolveDir: repoRoot, loader: 'ts' } });
  execFileSync('bash', ['-c', copyProtosCommand(outDir)]);
  return outfile;
}
