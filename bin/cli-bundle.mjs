// Which bundle of the command line may run (infra/build/cli-build.ts builds it): the current one,
// while every source it was built from and npm's lockfile are as they were then. Plain JavaScript
// because the bin asks before it knows which Node it runs on. One stat a source: about 2 ms in all.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

export const BUNDLE_ROOT = 'node_modules/.cache/etcd-remediator/cli';
export const MANIFEST = `${BUNDLE_ROOT}/manifest.json`;
/** npm rewrites it on every change to node_modules. */
export const LOCKFILE = 'node_modules/.package-lock.json';

const same = (file, recorded) => {
  try {
    const { mtimeMs, size } = statSync(file);
    return mtimeMs === recorded.mtimeMs && size === recorded.size;
  } catch {
    return false;
  }
};

/** The bundle's entry file when it matches the sources under `root`; undefined otherwise. */
export function freshBundle(root) {
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(join(root, MANIFEST), 'utf8'));
  } catch {
    return undefined;
  }
  if (manifest?.version !== 1 || typeof manifest.entry !== 'string' || !Array.isArray(manifest.inputs)) return undefined;
  if (!same(join(root, LOCKFILE), manifest.lockfile ?? {})) return undefined;
  if (!manifest.inputs.every((input) => typeof input?.path === 'string' && same(join(root, input.path), input))) return undefined;
  const entry = join(root, BUNDLE_ROOT, manifest.entry);
  return statSync(entry, { throwIfNoEntry: false })?.isFile() ? entry : undefined;
}
