// The bin runs the command line's bundle only while it matches the sources it was built from
// (bin/cli-bundle.mjs), and the sources otherwise: a tree of its own, whose main.ts says which
// file runs it, built by the real build (infra/build/cli-build.ts) and run by the real bin.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { buildCli } from '../../../infra/build/cli-build.ts';
import { BUNDLE_ROOT, LOCKFILE, MANIFEST, type Manifest } from '../../../bin/cli-bundle.mjs';
import { BIN, runCli } from './support.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

let root: string;
const inRoot = (...parts: string[]): string => path.join(root, ...parts);
const write = (file: string, text: string): void => {
  fs.mkdirSync(path.dirname(inRoot(file)), { recursive: true });
  fs.writeFileSync(inRoot(file), text);
};
/** Which file ran: main.ts (the sources) or a chunk of the bundle. */
const ran = async (env: Record<string, string> = {}): Promise<string> => {
  const run = await runCli([], { script: inRoot('bin', path.basename(BIN)), env: { ETCD_REMEDIATOR_DEBUG: '', ...env } });
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  return path.basename(run.stdout.trim());
};

beforeEach(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'bundle-choice-'));
  dirs.push(root);
  for (const file of ['etcd-remediator.mjs', 'cli-bundle.mjs']) fs.cpSync(path.join(path.dirname(BIN), file), inRoot('bin', file));
  write('infra/cli/main.ts', 'const file: string = import.meta.filename;\nprocess.stdout.write(`${file}\\n`);\n');
  write(LOCKFILE, '{}');
  await buildCli(root);
});

describe('which command line the bin runs', () => {
  it('the bundle, while its sources and the lockfile are as they were built', async () => {
    expect(await ran()).toBe('main.mjs');
  });

  it('the sources once one of them changed, and the bundle again once rebuilt', async () => {
    fs.appendFileSync(inRoot('infra/cli/main.ts'), '// changed\n');
    expect(await ran()).toBe('main.ts');
    await buildCli(root);
    expect(await ran()).toBe('main.mjs');
  });

  it('the sources after an install changed node_modules', async () => {
    write(LOCKFILE, '{"changed":true}');
    expect(await ran()).toBe('main.ts');
  });

  it('the sources under ETCD_REMEDIATOR_DEBUG, whose stack traces name them', async () => {
    expect(await ran({ ETCD_REMEDIATOR_DEBUG: '1' })).toBe('main.ts');
  });

  it.each([
    ['a manifest that is not JSON', () => write(MANIFEST, '{')],
    ['a manifest of another shape', () => write(MANIFEST, '{"version":1,"entry":3}')],
    ['a bundle whose entry was removed', () => fs.rmSync(inRoot(BUNDLE_ROOT, (JSON.parse(fs.readFileSync(inRoot(MANIFEST), 'utf8')) as Manifest).entry))],
  ])('the sources, without a word, for %s', async (_what, spoil) => {
    spoil();
    expect(await ran()).toBe('main.ts');
  });
});
