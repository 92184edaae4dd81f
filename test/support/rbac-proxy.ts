// A FAKE of the API server's authorization in front of the FAKE API server: each request is
// authorised against RBAC rules as the real API server authorises it, and forwarded only when they
// allow it; otherwise it is refused with 403 Forbidden and the API server's Status body. Requests
// without the proxy's bearer token get 401.
// Models: k8s.io/apiserver pkg/endpoints/request/requestinfo.go (the verb, API group, resource,
// subresource and namespace of a request: GET of a collection is list, with ?watch=true watch;
// POST create, PUT update, PATCH patch, DELETE delete or deletecollection; discovery paths are
// non-resource and open to every authenticated user, system:discovery),
// plugin/pkg/auth/authorizer/rbac/rbac.go RuleAllows (a Role's rules hold in its namespace only,
// a ClusterRole's everywhere), and for exec and port-forward, a WebSocket GET authorised as get and
// since 1.35 also as create (kube-paths.md §0.4).
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { V1PolicyRule } from '@kubernetes/client-node';

export interface RbacRules {
  /** A ClusterRole's rules, bound cluster-wide. */
  cluster: V1PolicyRule[];
  /** Roles' rules, by the namespace they are bound in. */
  namespaced?: Record<string, V1PolicyRule[]>;
}

export interface Attributes {
  verb: string;
  group: string;
  /** With its subresource, e.g. pods/exec. */
  resource: string;
  namespace?: string;
  name?: string;
}

export interface Decision extends Attributes {
  allowed: boolean;
}

export interface RbacProxy {
  url: string;
  /** Every resource request, and whether it was allowed. */
  readonly decisions: Decision[];
  /** A kubeconfig for this proxy with its token (JSON, which is YAML). */
  kubeconfigYaml(): string;
  stop(): Promise<void>;
}

/** requestinfo.go, for the paths the product uses; undefined for a non-resource path (discovery). */
export function attributesOf(method: string, url: URL): Attributes | undefined {
  const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
  let group: string;
  let rest: string[];
  if (parts[0] === 'api' && parts.length >= 3) [group, rest] = ['', parts.slice(2)];
  else if (parts[0] === 'apis' && parts.length >= 4) [group, rest] = [parts[1]!, parts.slice(3)];
  else return undefined;
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3) [namespace, rest] = [rest[1], rest.slice(2)];
  const [resource = '', name, subresource] = rest;
  const watch = ['true', '1'].includes(url.searchParams.get('watch') ?? '');
  const verbs: Record<string, string> = { POST: 'create', PUT: 'update', PATCH: 'patch' };
  const verb =
    method === 'GET' || method === 'HEAD'
      ? name === undefined
        ? watch
          ? 'watch'
          : 'list'
        : 'get'
      : method === 'DELETE'
        ? name === undefined
          ? 'deletecollection'
          : 'delete'
        : (verbs[method] ?? method.toLowerCase());
  return { verb, group, resource: subresource ? `${resource}/${subresource}` : resource, ...(namespace ? { namespace } : {}), ...(name ? { name } : {}) };
}

const ruleAllows = (rule: V1PolicyRule, a: Attributes): boolean =>
  (rule.apiGroups ?? []).some((g) => g === '*' || g === a.group) &&
  (rule.resources ?? []).some((r) => r === '*' || r === a.resource) &&
  rule.verbs.some((v) => v === '*' || v === a.verb) &&
  (rule.resourceNames === undefined || (a.name !== undefined && rule.resourceNames.includes(a.name)));

export function allows(rules: RbacRules, a: Attributes): boolean {
  const scoped = a.namespace === undefined ? [] : (rules.namespaced?.[a.namespace] ?? []);
  return [...rules.cluster, ...scoped].some((rule) => ruleAllows(rule, a));
}

/** The Status the API server writes for a refused request (apimachinery errors.NewForbidden). */
function forbidden(a: Attributes, user: string): object {
  const what = a.name ? `${a.resource.split('/')[0]} "${a.name}"` : a.resource.split('/')[0];
  const where = a.namespace ? ` in the namespace "${a.namespace}"` : a.group === '' ? ' at the cluster scope' : '';
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `${what} is forbidden: User "${user}" cannot ${a.verb} resource "${a.resource}" in API group "${a.group}"${where}`,
    reason: 'Forbidden',
    details: { ...(a.name ? { name: a.name } : {}), kind: a.resource.split('/')[0] },
    code: 403,
  };
}

const statusText = (code: number, body: object): string => {
  const text = JSON.stringify(body);
  return `HTTP/1.1 ${code} ${http.STATUS_CODES[code]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`;
};

export async function startRbacProxy(options: { upstream: string; rules: RbacRules; token: string; user: string }): Promise<RbacProxy> {
  const upstream = new URL(options.upstream);
  const decisions: Decision[] = [];
  /** Upgraded streams, which the HTTP server no longer tracks. */
  const streams = new Set<net.Socket>();
  /** undefined when allowed; otherwise the code and Status body of the refusal. */
  const authorize = (request: http.IncomingMessage, upgrade: boolean): { code: number; body: object } | undefined => {
    if (request.headers.authorization !== `Bearer ${options.token}`)
      return {
        code: 401,
        body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 },
      };
    const attributes = attributesOf(request.method ?? 'GET', new URL(request.url ?? '/', 'http://proxy'));
    if (!attributes) return undefined;
    // A WebSocket exec or port-forward must also be allowed to create it (1.35, on by default).
    const verbs = upgrade ? ['get', 'create'] : [attributes.verb];
    const refused = verbs.find((verb) => !allows(options.rules, { ...attributes, verb }));
    decisions.push({ ...attributes, allowed: refused === undefined });
    return refused === undefined ? undefined : { code: 403, body: forbidden({ ...attributes, verb: refused }, options.user) };
  };

  const server = http.createServer((request, response) => {
    const refusal = authorize(request, false);
    if (refusal) {
      const text = JSON.stringify(refusal.body);
      response.writeHead(refusal.code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
      response.end(text);
      return;
    }
    const forward = http.request(
      { host: upstream.hostname, port: upstream.port, method: request.method, path: request.url, headers: request.headers },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        // A watch answers its head long before its first event: pass the head on at once.
        response.flushHeaders();
        answer.pipe(response);
      },
    );
    forward.on('error', () => response.destroy());
    request.pipe(forward);
  });
  server.on('upgrade', (request: http.IncomingMessage, socket: net.Socket, head: Buffer) => {
    socket.on('error', () => undefined);
    streams.add(socket);
    socket.on('close', () => streams.delete(socket));
    const refusal = authorize(request, true);
    if (refusal) {
      socket.end(statusText(refusal.code, refusal.body));
      return;
    }
    const next = net.connect({ host: upstream.hostname, port: Number(upstream.port) }, () => {
      const headers = [];
      for (let i = 0; i < request.rawHeaders.length; i += 2) headers.push(`${request.rawHeaders[i]}: ${request.rawHeaders[i + 1]}`);
      next.write(`${request.method} ${request.url} HTTP/1.1\r\n${headers.join('\r\n')}\r\n\r\n`);
      if (head.length > 0) next.write(head);
      next.pipe(socket);
      socket.pipe(next);
    });
    next.on('error', () => socket.destroy());
    socket.on('close', () => next.destroy());
    next.on('close', () => socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    decisions,
    kubeconfigYaml: () =>
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'proxy', cluster: { server: url, 'insecure-skip-tls-verify': true } }],
        users: [{ name: 'proxy', user: { token: options.token } }],
        contexts: [{ name: 'proxy', context: { cluster: 'proxy', user: 'proxy' } }],
        'current-context': 'proxy',
      }),
    async stop() {
      for (const socket of streams) socket.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
