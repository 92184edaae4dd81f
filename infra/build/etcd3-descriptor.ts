// etcd3's protocol definitions, precompiled. etcd3 parses its .proto files with
// @grpc/proto-loader's loadSync when it is imported (lib/connection-pool.js); a bundle instead
// carries them as protobufjs JSON, made here from the same files at build time, and hands them to
// proto-loader's fromJSON: the same package definition, without parsing .proto on a cold start.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Plugin } from 'esbuild';
import type { INamespace, Root } from 'protobufjs';

const require = createRequire(import.meta.url);

/** The options etcd3 loads its protos with: keepCase alone shapes the parse (field names as written). */
export const ETCD3_LOAD_OPTIONS = { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true } as const;

/** etcd3's rpc.proto as installed, resolved the way the bundler resolves etcd3. */
export const etcd3RpcProto = (): string => join(dirname(require.resolve('etcd3/package.json')), 'proto', 'rpc.proto');

type LoadProtos = (filename: string, options: object) => Root;

/** The descriptor, parsed by proto-loader's own loader with etcd3's options. */
export function etcd3Descriptor(): INamespace {
  const { loadProtosWithOptionsSync } = require('@grpc/proto-loader/build/src/util.js') as { loadProtosWithOptionsSync: LoadProtos };
  return loadProtosWithOptionsSync(etcd3RpcProto(), ETCD3_LOAD_OPTIONS).toJSON();
}

/** What etcd3 gets for `require("@grpc/proto-loader")` inside a bundle. */
const loaderModule = (descriptor: INamespace): string => `
import { fromJSON } from '@grpc/proto-loader';
const descriptor = ${JSON.stringify(descriptor)};
export function loadSync(filename, options) {
  if (!/(^|\\/)rpc\\.proto$/.test(String(filename))) throw new Error('etcd3 asked for ' + filename + ', but the bundle carries rpc.proto alone (infra/build/etcd3-descriptor.ts)');
  return fromJSON(descriptor, options);
}
`;

const NAMESPACE = 'etcd3-precompiled';

/** Gives etcd3 (and only etcd3) a proto-loader whose loadSync returns the precompiled definitions. */
export const etcd3DescriptorPlugin = (): Plugin => ({
  name: 'etcd3-precompiled-protos',
  setup(build) {
    build.onResolve({ filter: /^@grpc\/proto-loader$/ }, (args) =>
      /[\\/]node_modules[\\/]etcd3[\\/]/.test(args.importer) ? { path: 'proto-loader', namespace: NAMESPACE, pluginData: dirname(args.importer) } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: NAMESPACE }, (args) => ({
      contents: loaderModule(etcd3Descriptor()),
      loader: 'js',
      // The real proto-loader, as etcd3 would have found it.
      resolveDir: args.pluginData as string,
    }));
  },
});
