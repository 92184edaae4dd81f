// zod without the parts nobody calls. `import { z } from 'zod'` hands out zod's whole namespace as
// one object (zod/index.js re-exports it), which esbuild must keep entire: every schema type,
// the JSON Schema converters, the locales. The same import as `import * as z` of the module that
// namespace is (zod/v4/classic/external.js) is the same object to the code, and lets esbuild keep
// only the members the code names. Rewritten here, at build time, in our sources and in the
// Powertools parser's, the only files of a bundle that import zod's namespace.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Plugin } from 'esbuild';

/** `import { z } from 'zod'`, maybe with other names beside z, as written in both. */
const IMPORT_Z = /import\s*\{([^}]*)\}\s*from\s*(['"])zod\2;?/g;
const BARE_Z = /^\s*z\s*$/;

export function asNamespaceImport(source: string, external: string): string {
  return source.replace(IMPORT_Z, (statement: string, names: string) => {
    const list = names.split(',');
    if (!list.some((name) => BARE_Z.test(name))) return statement;
    const rest = list.filter((name) => !BARE_Z.test(name) && name.trim() !== '');
    return `import * as z from ${JSON.stringify(external)};${rest.length > 0 ? ` import {${rest.join(',')}} from ${JSON.stringify(external)};` : ''}`;
  });
}

export const zodNamespacePlugin = (): Plugin => ({
  name: 'zod-namespace',
  setup(build) {
    const external = join(dirname(createRequire(import.meta.url).resolve('zod/package.json')), 'v4', 'classic', 'external.js');
    build.onLoad({ filter: /[\\/](functions|events)[\\/].*\.ts$|[\\/]@aws-lambda-powertools[\\/]parser[\\/].*\.js$/ }, async (args) => {
      if (args.path.includes('node_modules') && !args.path.includes('@aws-lambda-powertools')) return undefined;
      const source = await readFile(args.path, 'utf8');
      if (!/from\s*['"]zod['"]/.test(source)) return undefined;
      return { contents: asNamespaceImport(source, external), loader: args.path.endsWith('.ts') ? 'ts' : 'js' };
    });
  },
});
