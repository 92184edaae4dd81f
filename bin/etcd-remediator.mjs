#!/usr/bin/env node
// Runs the TypeScript CLI with Node's built-in type stripping (Node ≥ 23.6). On an older Node it
// re-runs itself with the project's own Node (the `node` devDependency).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import module from 'node:module';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import process from 'node:process';
import { fileURLToPath, pathToFileURL, URL } from 'node:url';
import { freshBundle } from './cli-bundle.mjs';

/**
 * Where V8's code cache for the CLI's modules is kept: the user's own cache directory, never a
 * shared /tmp where another user could plant one. From the second run on, a command starts in about
 * 60% of the time. Each level is made on its own (a recursive mkdir under /proc spins for ever), and
 * where one cannot be made the cache is simply off. NODE_COMPILE_CACHE and
 * NODE_DISABLE_COMPILE_CACHE still rule.
 */
function compileCacheDir() {
  // A relative XDG_CACHE_HOME is to be ignored (XDG Base Directory Specification).
  const xdg = process.env.XDG_CACHE_HOME;
  const levels = [xdg && isAbsolute(xdg) ? xdg : join(homedir(), '.cache'), 'etcd-remediator', 'node-compile-cache'];
  let dir = '';
  for (const level of levels) {
    dir = dir ? join(dir, level) : level;
    try {
      mkdirSync(dir, { mode: 0o700 });
    } catch (error) {
      if (error?.code !== 'EEXIST' || !statSync(dir).isDirectory()) return undefined;
    }
  }
  return dir;
}

const [major, minor] = process.versions.node.split('.').map(Number);
const strips = major > 23 || (major === 23 && minor >= 6);

if (strips) {
  if (!process.env.NODE_COMPILE_CACHE) {
    const dir = compileCacheDir();
    if (dir) module.enableCompileCache?.(dir);
  }
  // The bundle while it matches the sources (infra/build/cli-build.ts): a command starts in about
  // 60 % of the time. The sources otherwise, and under ETCD_REMEDIATOR_DEBUG, whose stacks name them.
  const bundle = process.env.ETCD_REMEDIATOR_DEBUG ? undefined : freshBundle(fileURLToPath(new URL('..', import.meta.url)));
  // The sources' import stays a literal: the image's test follows it to every file the image must carry.
  if (bundle) await import(pathToFileURL(bundle).href);
  else await import('../infra/cli/main.ts');
} else {
  const node = fileURLToPath(new URL('../node_modules/node/bin/node', import.meta.url));
  if (!existsSync(node)) {
    process.stderr.write(`etcd-remediator: needs Node 23.6 or later (this is ${process.version}); run npm install to get the project's Node\n`);
    process.exit(1);
  }
  // The IPC channel is how the child knows this process is gone, even after a SIGKILL that
  // nothing here can catch: the child stops when the channel closes (infra/cli/parent-watch.ts).
  const child = spawn(node, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: ['inherit', 'inherit', 'inherit', 'ipc'] });
  // The child gets terminal signals itself; signals sent to this pid alone are passed on.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => {
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    } else process.exit(code ?? 1);
  });
}
