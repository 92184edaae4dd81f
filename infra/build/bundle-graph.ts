// Which files of a split bundle a cold start loads: index.mjs and every chunk it imports
// statically, transitively. A chunk reached only through a dynamic import() waits until the code
// that imports it runs (the Kubernetes client: functions/adapters/kube/kube-on-demand.ts).
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Metafile } from 'esbuild';
import { repoRoot } from '../cdk/repo-paths.ts';

/** The metafile's output paths (relative to the repository) loaded with `entryFile`. */
export function loadedWith(metafile: Metafile, entryFile: string): string[] {
  const entry = Object.keys(metafile.outputs).find((path) => resolve(repoRoot, path) === resolve(entryFile));
  if (!entry) throw new Error(`no output ${entryFile} in the metafile`);
  const loaded = new Set([entry]);
  for (const path of loaded) {
    for (const imported of metafile.outputs[path]!.imports) {
      if (imported.kind === 'import-statement' && !imported.external) loaded.add(imported.path);
    }
  }
  return [...loaded];
}

/** The outputs not loaded with the entry: the chunks only a dynamic import() reaches. */
export const loadedLater = (metafile: Metafile, entryFile: string): string[] => {
  const first = new Set(loadedWith(metafile, entryFile));
  return Object.keys(metafile.outputs).filter((path) => !path.endsWith('.map') && !first.has(path));
};

/** The source files (node_modules/… or ours) that went into these outputs. */
export const inputsOf = (metafile: Metafile, outputs: readonly string[]): string[] => outputs.flatMap((path) => Object.keys(metafile.outputs[path]!.inputs));

// esbuild's own output, minified or not: `import{a as b}from"./chunk-X.mjs"`, `import"./chunk-X.mjs"`,
// `export{a}from"./chunk-X.mjs"`; never `import("./chunk-X.mjs")`, which loads later.
const STATIC_IMPORT = /\b(?:import|export)\s*(?:(?:[\w$]+\s*,?\s*)?(?:\{[^}]*\}|\*\s*as\s+[\w$]+)?\s*from\s*)?["'](\.\/[^"']+\.mjs)["']/g;

/** The same files as loadedWith, read from a built bundle's folder: index.mjs and its static chunks. */
export function filesLoadedWith(indexFile: string): string[] {
  const loaded = new Set([resolve(indexFile)]);
  for (const file of loaded) {
    for (const [, relative] of readFileSync(file, 'utf8').matchAll(STATIC_IMPORT)) loaded.add(resolve(dirname(file), relative!));
  }
  return [...loaded];
}
