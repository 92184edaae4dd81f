// Where a bundle's bytes and import time go. Bytes: esbuild's metafile of the stack's own build
// (infra/build/function-build.ts), of the files a cold start loads, checked to come out the same
// size as the deployed asset's, grouped by package. Time: small bundles of one dependency each,
// built the same way, imported alone in fresh processes.
import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { build, type Metafile } from 'esbuild';
import { loadedWith } from '../../../infra/build/bundle-graph.ts';
import { buildFunction, functionBuildOptions } from '../../../infra/build/function-build.ts';
import { lambdaEntry, repoRoot } from '../../../infra/cdk/repo-paths.ts';

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

/** Each input of the files a cold start loads (index.mjs and its static chunks) and the bytes it put there. */
export function inputsOf(metafile: Metafile, indexFile: string): InputBytes[] {
  return loadedWith(metafile, indexFile).flatMap((output) =>
    Object.entries(metafile.outputs[output]!.inputs).map(([path, { bytesInOutput }]) => ({ path, bytes: bytesInOutput })),
  );
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

/** A function's entry built as the stack builds it: the bytes a cold start loads and what went into them. */
export async function analyseFunction(name: string, dir: string): Promise<{ bytes: number; inputs: InputBytes[] }> {
  const outdir = join(dir, name);
  const metafile = await buildFunction(lambdaEntry(name), outdir, { metafile: true });
  if (!metafile) throw new Error(`esbuild wrote no metafile for ${name}`);
  const index = join(outdir, 'index.mjs');
  const bytes = loadedWith(metafile, index).reduce((sum, output) => sum + statSync(join(repoRoot, output)).size, 0);
  return { bytes, inputs: inputsOf(metafile, index) };
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

/** Builds one part as the stack would bundle it; returns its index.mjs. */
export async function buildPart(part: string, dir: string): Promise<string> {
  const outDir = join(dir, `part-${part.replace(/[^a-z0-9]+/gi, '-')}`);
  mkdirSync(outDir, { recursive: true });
  const { entryPoints: _, ...options } = functionBuildOptions('', outDir);
  await build({ ...options, entryNames: 'index', stdin: { contents: PARTS[part]!, resolveDir: repoRoot, loader: 'ts', sourcefile: 'index.ts' } });
  return join(outDir, 'index.mjs');
}
