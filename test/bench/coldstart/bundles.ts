// The six bundles exactly as deployed: the stack synthesized into a scratch folder, so CDK's own
// NodejsFunction bundling (infra/cdk/bundling.ts, its hook running the split build of
// infra/build) writes each asset, and the template says which asset and which environment each
// function gets. Beside them, the baseline, built by the same build.
import { existsSync, mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { filesLoadedWith } from '../../../infra/build/bundle-graph.ts';
import { buildFunction } from '../../../infra/build/function-build.ts';
import { EtcdRemediatorStack } from '../../../infra/cdk/stack.ts';

export interface DeployedBundle {
  /** The function, as its POWERTOOLS_SERVICE_NAME says. */
  name: string;
  /** index.mjs in the asset folder; its chunks beside it. */
  file: string;
  /** What a cold start loads: index.mjs and the chunks it imports statically, not those a dynamic import() loads later. */
  bytes: number;
  /** How many files those bytes are. */
  files: number;
  /** The function's environment from the template; references are left for the caller to fill. */
  environment: Record<string, unknown>;
  /** A pipeline function's etcd client: the chunk its first etcd access imports, and what that adds to `bytes`. */
  etcdChunk?: { file: string; bytes: number; files: number };
}

interface FunctionResource {
  Type: string;
  Properties: { Code?: { S3Key?: unknown }; Environment?: { Variables?: Record<string, unknown> }; Handler?: unknown };
}

export function synthBundles(): { outdir: string; bundles: DeployedBundle[] } {
  const outdir = mkdtempSync(join(tmpdir(), 'coldstart-synth-'));
  // As infra/app.ts builds it; CloudFormation's template checks add time and nothing to bundles.
  const app = new App({ outdir, builtinCloudFormationValidation: false });
  const stack = new EtcdRemediatorStack(app, 'EtcdRemediator');
  const assembly = app.synth();
  const template = assembly.getStackArtifact(stack.artifactId).template as { Resources: Record<string, FunctionResource> };
  const bundles = Object.values(template.Resources)
    .filter((r) => r.Type === 'AWS::Lambda::Function')
    .map((r): DeployedBundle => {
      const key = r.Properties.Code?.S3Key;
      const environment = r.Properties.Environment?.Variables ?? {};
      if (typeof key !== 'string') throw new Error(`a function's S3Key is not a plain asset key: ${JSON.stringify(key)}`);
      if (r.Properties.Handler !== 'index.handler') throw new Error(`unexpected handler ${String(r.Properties.Handler)}`);
      const file = join(assembly.directory, `asset.${key.replace(/\.zip$/, '')}`, 'index.mjs');
      if (!existsSync(file)) throw new Error(`no bundle at ${file}`);
      const etcdChunk = etcdChunkOf(file);
      return { name: String(environment.POWERTOOLS_SERVICE_NAME), file, ...loadedBytes(file), environment, ...(etcdChunk ? { etcdChunk } : {}) };
    });
  return { outdir, bundles };
}

/** The bytes and files a cold start of `file` loads. */
export function loadedBytes(file: string): { bytes: number; files: number } {
  const files = filesLoadedWith(file);
  return { bytes: files.reduce((sum, f) => sum + statSync(f).size, 0), files: files.length };
}

/** The etcd chunk beside `indexFile` (functions/aws-wiring/etcd-chunk.ts), with the files it loads beyond index.mjs's. */
export function etcdChunkOf(indexFile: string): DeployedBundle['etcdChunk'] {
  const name = readdirSync(dirname(indexFile)).find((f) => /^etcd-chunk-[^.]+\.mjs$/.test(f));
  if (!name) return undefined;
  const file = join(dirname(indexFile), name);
  const already = new Set(filesLoadedWith(indexFile));
  const added = filesLoadedWith(file).filter((f) => !already.has(f));
  return { file, bytes: added.reduce((sum, f) => sum + statSync(f).size, 0), files: added.length };
}

/** The baseline handler (baseline-handler.ts), built by the stack's own build into `dir`. */
export async function buildBaseline(dir: string, environment: Record<string, unknown>): Promise<DeployedBundle> {
  const outdir = join(dir, 'baseline');
  await buildFunction(new URL('./baseline-handler.ts', import.meta.url).pathname, outdir);
  const file = join(outdir, 'index.mjs');
  return { name: 'baseline', file, ...loadedBytes(file), environment };
}
