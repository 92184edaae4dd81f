// zod with the English messages only. zod's namespace exports every locale (`z.locales`, 260 kB
// of the bundle) though it shows English unless told otherwise, and the project never tells it
// otherwise. English stays the default: zod's schemas import it directly (classic/schemas.js).
import type { Plugin } from 'esbuild';

const NAMESPACE = 'zod-en-only';

export const zodEnOnlyPlugin = (): Plugin => ({
  name: 'zod-en-only',
  setup(build) {
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]node_modules[\\/]zod[\\/]/.test(args.importer) ? { path: 'locales', namespace: NAMESPACE, pluginData: args.resolveDir } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: NAMESPACE }, (args) => ({
      contents: "export { default as en } from '../locales/en.js';",
      loader: 'js',
      resolveDir: args.pluginData as string,
    }));
  },
});
