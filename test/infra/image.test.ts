// The image infra/kubernetes/deploy/deployment.yaml runs (as its kustomization.yaml's images: names
// it), checked without a container engine: the Dockerfile copies what exists, its ENTRYPOINT is the
// package's command line and what the Deployment's args expect, it runs as the Deployment's user,
// and the tree it builds (the copied folders and the production dependencies alone) runs every
// command's --help.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { builtinModules } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAllYaml, loadYaml, type KubernetesObject, type V1Deployment } from '@kubernetes/client-node';

const ROOT = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
const packageJson = JSON.parse(read('package.json')) as { version: string; bin: Record<string, string>; dependencies: Record<string, string> };
const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { dev?: boolean }> };

interface Instruction {
  keyword: string;
  args: string;
  /** The build stage it belongs to, by its index. */
  stage: number;
}

/** The Dockerfile's instructions, continuation lines joined and comments dropped. */
function instructions(text: string): Instruction[] {
  const lines = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  let stage = -1;
  return lines.map((line) => {
    const [keyword = '', ...rest] = line.split(/\s+/);
    if (keyword.toUpperCase() === 'FROM') stage += 1;
    return { keyword: keyword.toUpperCase(), args: rest.join(' '), stage };
  });
}

const DOCKERFILE = fs.existsSync(path.join(ROOT, 'Dockerfile')) ? read('Dockerfile') : '';
const steps = instructions(DOCKERFILE);
const finalStage = Math.max(...steps.map((s) => s.stage));
const final = steps.filter((s) => s.stage === finalStage);
const lastOf = (keyword: string) => final.filter((s) => s.keyword === keyword).at(-1)?.args;
const execForm = (args: string | undefined): string[] => (args === undefined ? [] : (JSON.parse(args) as string[]));

/** COPY lines of the final stage from the build context (not --from another stage): [source, destination]. */
const contextCopies = final
  .filter((s) => s.keyword === 'COPY' && !s.args.startsWith('--from'))
  .flatMap((s) => {
    const parts = s.args.split(/\s+/).filter((part) => !part.startsWith('--'));
    const destination = parts.pop()!;
    return parts.map((source) => [source, destination] as const);
  });

const deployment = (loadAllYaml(read('infra/kubernetes/deploy/deployment.yaml')) as KubernetesObject[]).find((o) => o.kind === 'Deployment') as V1Deployment;
const pod = deployment.spec!.template.spec!;
const container = pod.containers[0]!;
/** The image the container runs once Kustomize's images: has rewritten its short name. */
const image = (() => {
  const { images = [] } = loadYaml<{ images?: { name: string; newName?: string; newTag?: string }[] }>(read('infra/kubernetes/deploy/kustomization.yaml'));
  const set = images.find((entry) => entry.name === container.image);
  return set ? `${set.newName ?? set.name}:${set.newTag ?? 'latest'}` : container.image;
})();

/** Where a path of the image comes from in the repository, by the COPY lines (undefined: not copied). */
function sourceOf(imagePath: string, workdir: string): string | undefined {
  const absolute = path.posix.resolve(workdir, imagePath);
  for (const [source, destination] of contextCopies) {
    const target = path.posix.resolve(workdir, destination);
    const isDirectory = fs.statSync(path.join(ROOT, source)).isDirectory();
    if (isDirectory && (absolute === target || absolute.startsWith(`${target}/`))) return path.join(source, path.posix.relative(target, absolute));
    if (!isDirectory && absolute === (destination.endsWith('/') ? path.posix.join(target, path.basename(source)) : target)) return source;
  }
  return undefined;
}

/** Every file the entry reaches by relative import (static or a literal dynamic import), and every bare module it names. */
function importGraph(entry: string): { files: Set<string>; modules: Set<string> } {
  const files = new Set<string>();
  const modules = new Set<string>();
  const pending = [path.resolve(ROOT, entry)];
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (files.has(file)) continue;
    files.add(file);
    // A JSON module (package.json, for --version) is data: copied, not read for imports.
    if (file.endsWith('.json')) continue;
    const text = fs.readFileSync(file, 'utf8');
    for (const match of text.matchAll(/(?:^|[^.\w])(?:import|export)\s*(?:[\w*{}\s,$]+?\s*from\s*)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/gm)) {
      // Type-only imports are stripped before the code runs.
      if (/^\W?(import|export)\s+type\s/.test(match[0])) continue;
      const specifier = match[1] ?? match[2]!;
      if (specifier.startsWith('.')) pending.push(path.resolve(path.dirname(file), specifier));
      else modules.add(specifier);
    }
  }
  return { files, modules };
}

const packageOf = (specifier: string): string => (specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!);
const isBuiltin = (specifier: string): boolean => specifier.startsWith('node:') || builtinModules.includes(specifier);

describe('Dockerfile', () => {
  it("exists, with a .dockerignore that keeps the checkout's own modules, tests and state out of the context", () => {
    expect(DOCKERFILE, 'Dockerfile').not.toBe('');
    const ignored = read('.dockerignore')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line && !line.startsWith('#'));
    for (const entry of ['node_modules', '.git', 'test', 'cdk.out', '.lab', '*.sqlite']) expect(ignored, entry).toContain(entry);
  });

  it("builds on Node 24 and runs as the Deployment's non-root user", () => {
    for (const from of steps.filter((s) => s.keyword === 'FROM')) expect(from.args).toMatch(/^node:24(-[a-z]+)?( AS \w+)?$|^gcr\.io\/distroless\/nodejs24/i);
    expect(lastOf('USER')).toBe(`${pod.securityContext?.runAsUser}:${pod.securityContext?.runAsGroup}`);
    expect(pod.securityContext?.runAsUser).toBe(65532);
  });

  it('names the image the Deployment runs, at the package version', () => {
    expect(image).toBe(`ghcr.io/example/etcd-remediator:${packageJson.version}`);
    expect(DOCKERFILE).toContain(`docker build -t ${image} .`);
  });

  it('installs the production dependencies alone, from the lockfile', () => {
    const installs = steps.filter((s) => s.keyword === 'RUN' && /\bnpm\b/.test(s.args));
    expect(installs.length).toBeGreaterThan(0);
    for (const run of installs) expect(run.args).toMatch(/npm ci --omit=dev/);
    expect(
      final.some((s) => s.keyword === 'COPY' && /--from=\w+ \S*node_modules/.test(s.args)),
      'node_modules from the install stage',
    ).toBe(true);
  });

  it('copies only what exists in the repository', () => {
    expect(contextCopies.length).toBeGreaterThan(0);
    for (const [source] of contextCopies) expect(fs.existsSync(path.join(ROOT, source)), source).toBe(true);
  });

  it("ENTRYPOINT is node and the package's bin, which the copies bring; the Deployment keeps it and passes the command as args", () => {
    const entrypoint = execForm(lastOf('ENTRYPOINT'));
    const workdir = lastOf('WORKDIR') ?? '/';
    expect(entrypoint[0]).toBe('node');
    expect(entrypoint.slice(1)).toEqual([packageJson.bin['etcd-remediator']]);
    expect(sourceOf(entrypoint[1]!, workdir), `${entrypoint[1]} in the image`).toBe(packageJson.bin['etcd-remediator']);
    // The Deployment names no command, so the ENTRYPOINT runs with its args: `etcd-remediator watch …`.
    expect(container.command).toBeUndefined();
    expect(container.args?.[0]).toBe('watch');
  });

  it('every file the command line imports is copied, and every package it imports is a production dependency', () => {
    const workdir = lastOf('WORKDIR') ?? '/';
    const entry = execForm(lastOf('ENTRYPOINT'))[1]!;
    const { files, modules } = importGraph(entry);
    expect(files.size).toBeGreaterThan(100);
    for (const file of files) {
      const relative = path.relative(ROOT, file);
      expect(sourceOf(relative, workdir), `${relative} is not copied into the image`).toBe(relative);
    }
    const packages = [...modules].filter((m) => !isBuiltin(m)).map(packageOf);
    for (const name of new Set(packages)) expect(Object.keys(packageJson.dependencies), `${name} is imported but not a production dependency`).toContain(name);
  });
});

describe("the image's tree: the copies and the production dependencies alone", () => {
  let app: string;
  beforeAll(() => {
    app = fs.mkdtempSync(path.join(os.tmpdir(), 'image-tree-'));
    const workdir = lastOf('WORKDIR') ?? '/';
    for (const [source, destination] of contextCopies) {
      const target = path.join(app, path.posix.relative(workdir, path.posix.resolve(workdir, destination)));
      const into = fs.statSync(path.join(ROOT, source)).isDirectory() || !destination.endsWith('/') ? target : path.join(target, path.basename(source));
      fs.mkdirSync(path.dirname(into), { recursive: true });
      fs.cpSync(path.join(ROOT, source), into, { recursive: true });
    }
    // As `npm ci --omit=dev` lays them out: the lockfile's top-level packages that are not dev-only.
    for (const [key, entry] of Object.entries(lock.packages)) {
      if (!/^node_modules\/(@[^/]+\/)?[^/]+$/.test(key) || entry.dev) continue;
      fs.mkdirSync(path.dirname(path.join(app, key)), { recursive: true });
      fs.symlinkSync(path.join(ROOT, key), path.join(app, key));
    }
  });
  afterAll(() => {
    if (app) fs.rmSync(app, { recursive: true, force: true });
  });

  const commands = ['probe', 'plan', 'remediate', 'status', 'report', 'run', 'lab', 'watch', 'send', 'register'];

  it('no dev-only package is in it', () => {
    for (const name of ['vitest', 'typescript', 'aws-cdk-lib', 'esbuild', 'node'])
      expect(fs.existsSync(path.join(app, 'node_modules', name)), name).toBe(false);
  });

  it.each([[[] as string[]], ...commands.map((command) => [[command]])])('node <ENTRYPOINT> %j --help answers', (command) => {
    const entrypoint = execForm(lastOf('ENTRYPOINT'));
    // The Node 24 the image has: this one (the project's own), not the system's.
    const out = execFileSync(process.execPath, [...entrypoint.slice(1), ...command, '--help'], {
      cwd: app,
      encoding: 'utf8',
      timeout: 30_000,
      env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production' },
    });
    expect(out).toMatch(command.length === 0 ? /^usage: etcd-remediator <command>/ : new RegExp(`^usage: etcd-remediator ${command[0]}`));
  });
});
