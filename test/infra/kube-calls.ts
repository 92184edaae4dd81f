// The Kubernetes API calls the product's code makes, found in its source: every call of a
// client-node CoreV1Api or CustomObjectsApi method, every informer, exec and port-forward, each
// turned into what RBAC authorises (API group, resource, verb) and put on the side whose cluster
// it runs against. For the RBAC test: the rules must grant exactly these.
import fs from 'node:fs';
import path from 'node:path';
import { ApisApi, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';

export type Side = 'management' | 'workload';

export interface Grant {
  group: string;
  resource: string;
  verb: string;
}

export interface KubeCall {
  /** Relative to the repository root, with the line: `functions/…/machines.ts:87`. */
  at: string;
  call: string;
  side: Side;
  grants: Grant[];
}

const ROOT = path.resolve(import.meta.dirname, '../..');

/** Which clusters a file's calls go to: the clients it calls through are made from those clusters' kubeconfigs. */
const SIDES: [RegExp, Side[]][] = [
  // The Event recorder: on a Machine through the management cluster (watch, and run or remediate
  // with Cluster API), on a Node through the workload cluster (run or remediate without it).
  [/^functions\/adapters\/kube\/cluster-api\/object-events\.ts$/, ['management', 'workload']],
  // The Cluster API objects, the kubeconfig and etcd CA Secrets, the requests: the management cluster.
  [/^functions\/adapters\/kube\/cluster-api\//, ['management']],
  [/^infra\/kubernetes\/(request-watcher(\.ts$|\/)|coexistence-scan\.ts$)/, ['management']],
  // The etcd pods, their Nodes (and a Node's uid for its Events), exec and port-forward: the workload cluster.
  [/^functions\/adapters\/kube\/(workload\.ts$|node-reference\.ts$|streams\/|port-forward\/|exec-relay\/)/, ['workload']],
];

const methodsOf = (api: { prototype: object }): Set<string> =>
  new Set(Object.getOwnPropertyNames(api.prototype).filter((name) => name !== 'constructor' && !name.endsWith('WithHttpInfo')));
const CORE = methodsOf(CoreV1Api);
const CUSTOM = methodsOf(CustomObjectsApi);
/** Discovery, which every authenticated user may read (system:discovery), needs no rule. */
const DISCOVERY = new Set(['getAPIResources', 'getAPIVersions', 'getAPIGroup', 'getCode']);

const VERBS: [RegExp, string][] = [
  [/^deleteCollection/, 'deletecollection'],
  [/^read|^get/, 'get'],
  [/^list/, 'list'],
  [/^create/, 'create'],
  [/^patch/, 'patch'],
  [/^replace/, 'update'],
  [/^delete/, 'delete'],
];

const verbOf = (method: string): string => {
  const verb = VERBS.find(([pattern]) => pattern.test(method))?.[1];
  if (!verb) throw new Error(`${method}: no RBAC verb known for it; add it to VERBS in test/infra/kube-calls.ts`);
  return verb;
};

/** Kinds whose plural is not the kind lower-cased plus "s". */
const PLURALS: Record<string, string> = { Endpoints: 'endpoints', Ingress: 'ingresses', Policy: 'policies' };

/** readNamespacedSecret → secrets; listNode → nodes; readNamespacedPodStatus → pods/status. */
function coreResource(method: string): string {
  const match =
    /^(?:deleteCollection|read|list|create|patch|replace|delete)(?:Namespaced)?([A-Z][A-Za-z]*?)(Status|Log|Ephemeralcontainers|Resize)?(?:ForAllNamespaces)?$/.exec(
      method,
    );
  if (!match) throw new Error(`${method}: cannot tell its resource; add it to coreResource in test/infra/kube-calls.ts`);
  const kind = match[1]!;
  const plural = PLURALS[kind] ?? `${kind.toLowerCase()}s`;
  return match[2] ? `${plural}/${match[2].toLowerCase()}` : plural;
}

/** The source with comments blanked out (lengths and lines kept), so a comment naming a call is no call. */
const withoutComments = (text: string): string =>
  text.replace(
    /\/\*[\s\S]*?\*\/|(^|[^:'"`\\])\/\/[^\n]*/g,
    (comment, lead: string | undefined) => (lead ?? '') + comment.slice((lead ?? '').length).replace(/[^\n]/g, ' '),
  );

function sourceFiles(dir: string): string[] {
  return fs
    .readdirSync(path.join(ROOT, dir), { withFileTypes: true })
    .flatMap((entry) => (entry.isDirectory() ? sourceFiles(path.join(dir, entry.name)) : entry.name.endsWith('.ts') ? [path.join(dir, entry.name)] : []));
}

/** Every string constant of the sources, template literals of other constants worked out; a name two files give different values is left out. */
function stringConstants(files: Map<string, string>): Map<string, string> {
  const raw = new Map<string, string | null>();
  for (const text of files.values()) {
    for (const match of text.matchAll(/\bconst ([A-Z][A-Z0-9_]*) = (?:'([^']*)'|`([^`]*)`)/g)) {
      const value = match[2] ?? match[3]!;
      const name = match[1]!;
      raw.set(name, raw.has(name) && raw.get(name) !== value ? null : value);
    }
  }
  const resolved = new Map<string, string>();
  const resolve = (name: string, seen: Set<string>): string | undefined => {
    if (resolved.has(name)) return resolved.get(name);
    const value = raw.get(name);
    if (value === undefined || value === null || seen.has(name)) return undefined;
    let ok = true;
    const out = value.replace(/\$\{(\w+)\}/g, (_, inner: string) => resolve(inner, new Set([...seen, name])) ?? ((ok = false), ''));
    if (!ok) return undefined;
    resolved.set(name, out);
    return out;
  };
  for (const name of raw.keys()) resolve(name, new Set());
  return resolved;
}

/** The text between the parenthesis at `open` and the one that closes it. */
function balanced(text: string, open: number): string {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === '(') depth++;
    else if (text[i] === ')' && --depth === 0) return text.slice(open + 1, i);
  }
  throw new Error(`unbalanced call at offset ${open}`);
}

/** Splits call arguments at the commas of depth 0. */
const argumentsOf = (text: string): string[] => {
  const out: string[] = [];
  let depth = 0;
  let current = '';
  for (const char of text) {
    if ('([{'.includes(char)) depth++;
    if (')]}'.includes(char)) depth--;
    if (char === ',' && depth === 0) {
      out.push(current.trim());
      current = '';
    } else current += char;
  }
  if (current.trim() !== '') out.push(current.trim());
  return out;
};

interface Resolver {
  constants: Map<string, string>;
  where: string;
}

/** A literal or a constant's value. */
function valueOf(expression: string, resolver: Resolver): string {
  const literal = /^'([^']*)'$/.exec(expression.trim());
  if (literal) return literal[1]!;
  const value = resolver.constants.get(expression.trim());
  if (value === undefined)
    throw new Error(`${resolver.where}: cannot tell the value of ${expression.trim()}; use a string constant (const NAME = '…') for a group, plural or path`);
  return value;
}

/** `group` and `plural` of a CustomObjectsApi call: in its argument, or in a coordinates object (or helper) it spreads. */
function customCoordinates(argument: string, fileText: string, resolver: Resolver): { group: string; plural: string } {
  const found: { group?: string; plural?: string } = {};
  const direct = (key: 'group' | 'plural', text: string) => new RegExp(`\\b${key}:\\s*([A-Za-z_][\\w]*|'[^']*')`).exec(text)?.[1];
  for (const key of ['group', 'plural'] as const) {
    const expression = direct(key, argument);
    if (expression) found[key] = valueOf(expression, resolver);
  }
  // A spread object (`...base`) or helper (`...coordinates(name)`), or one that is the whole argument (`base`, `at('clusters', ns)`).
  for (const spread of argument.matchAll(/\.\.\.(\w+)(\()?|^\s*(\w+)\s*(?:(\()|$)/g)) {
    const name = spread[1] ?? spread[3]!;
    const args = (spread[2] ?? spread[4]) ? argumentsOf(balanced(argument, spread.index + spread[0].length - 1)) : [];
    const definition = new RegExp(`const ${name}\\s*=\\s*(?:\\(([^)]*)\\)\\s*(?::[^=]+)?=>\\s*\\(?)?\\{([^{}]*)\\}`).exec(fileText);
    if (!definition) continue;
    const params = (definition[1] ?? '')
      .split(',')
      .map((p) => p.split(':')[0]!.trim())
      .filter(Boolean);
    const body = definition[2]!;
    for (const key of ['group', 'plural'] as const) {
      if (found[key] !== undefined) continue;
      const expression = direct(key, body) ?? (new RegExp(`(^|[,{\\s])${key}\\s*(,|$)`).test(body) ? key : undefined);
      if (!expression) continue;
      const param = params.indexOf(expression);
      found[key] = valueOf(param >= 0 ? (args[param] ?? '') : expression, resolver);
    }
  }
  if (found.group === undefined || found.plural === undefined)
    throw new Error(
      `${resolver.where}: cannot tell which resource this CustomObjectsApi call names; give group and plural in its argument or in a const object it spreads`,
    );
  return { group: found.group, plural: found.plural };
}

/** `/apis/<group>/<version>/<plural>` or `/api/v1/<plural>`. */
function pathResource(apiPath: string, where: string): { group: string; resource: string } {
  const match = /^\/apis\/([^/]+)\/[^/]+\/([^/]+)$/.exec(apiPath) ?? /^\/api\/v1\/([^/]+)$/.exec(apiPath);
  if (!match) throw new Error(`${where}: ${apiPath} is not an API path of a resource`);
  return match.length === 3 ? { group: match[1]!, resource: match[2]! } : { group: '', resource: match[1]! };
}

/** Every call the product's code makes, from functions/ and infra/. */
export function kubeCalls(): KubeCall[] {
  const files = new Map(['functions', 'infra'].flatMap(sourceFiles).map((file) => [file, withoutComments(fs.readFileSync(path.join(ROOT, file), 'utf8'))]));
  const constants = stringConstants(files);
  const calls: KubeCall[] = [];
  for (const [file, text] of files) {
    const lineOf = (index: number) => text.slice(0, index).split('\n').length;
    const found: { index: number; call: string; grants: (where: string) => Grant[] }[] = [];
    for (const match of text.matchAll(/\.(\w+)\(/g)) {
      const method = match[1]!;
      if (DISCOVERY.has(method) || !(CORE.has(method) || CUSTOM.has(method))) continue;
      const open = match.index + match[0].length - 1;
      if (CUSTOM.has(method) && !CORE.has(method)) {
        found.push({
          index: match.index,
          call: method,
          grants: (where) => {
            const { group, plural } = customCoordinates(balanced(text, open), text, { constants, where });
            const sub = /(Status|Scale)$/.exec(method)?.[1];
            return [{ group, resource: sub ? `${plural}/${sub.toLowerCase()}` : plural, verb: verbOf(method) }];
          },
        });
      } else found.push({ index: match.index, call: method, grants: () => [{ group: '', resource: coreResource(method), verb: verbOf(method) }] });
    }
    for (const match of text.matchAll(/\bmakeInformer\(/g)) {
      const open = match.index + match[0].length - 1;
      found.push({
        index: match.index,
        call: 'makeInformer',
        grants: (where) => {
          const { group, resource } = pathResource(valueOf(argumentsOf(balanced(text, open))[1] ?? '', { constants, where }), where);
          return ['list', 'watch'].map((verb) => ({ group, resource, verb }));
        },
      });
    }
    // A WebSocket exec or port-forward is a GET, authorised as `get` on the subresource; since
    // Kubernetes 1.35 also as `create` (kube-paths.md §0.4).
    for (const match of text.matchAll(/\bnew (Exec|PortForward|Attach)\(/g)) {
      const resource = `pods/${match[1]!.toLowerCase()}`;
      found.push({ index: match.index, call: `new ${match[1]}`, grants: () => ['get', 'create'].map((verb) => ({ group: '', resource, verb })) });
    }
    for (const { index, call, grants } of found) {
      const at = `${file}:${lineOf(index)}`;
      const sides = SIDES.find(([pattern]) => pattern.test(file))?.[1];
      if (!sides) throw new Error(`${at}: ${call} runs against which cluster? Add ${file} to SIDES in test/infra/kube-calls.ts`);
      for (const side of sides) calls.push({ at, call, side, grants: grants(at) });
    }
  }
  return calls;
}

/** Other client-node API classes the code makes clients of, which kubeCalls() does not read. */
export function unreadApiClasses(): string[] {
  const files = ['functions', 'infra'].flatMap(sourceFiles);
  const classes = files.flatMap((file) => [...fs.readFileSync(path.join(ROOT, file), 'utf8').matchAll(/makeApiClient\((\w+)\)/g)].map((m) => m[1]!));
  // ApisApi is discovery alone (getAPIVersions, GET /apis), which needs no rule.
  const read = new Set(['CoreV1Api', 'CustomObjectsApi', ...(methodsOf(ApisApi).size === 1 && methodsOf(ApisApi).has('getAPIVersions') ? ['ApisApi'] : [])]);
  return [...new Set(classes)].filter((name) => !read.has(name));
}
