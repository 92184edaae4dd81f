// The Kustomize base infra/kubernetes/deploy (`kubectl apply -k infra/kubernetes/deploy`, README
// "Plug it into a MachineHealthCheck"), rendered by the real `kubectl kustomize`, not a model of it:
// the Namespace first, everything namespaced in it, the CRDs as their files define them, the image
// `images:` sets, a pod the restricted Pod Security Standard admits, the Service reaching the
// watcher's port, /metrics on with the token of a named Secret (copied by the init container to a
// file `watch` accepts), and the ServiceMonitor only with its optional component. No kubectl: the
// file fails, saying so; it does not skip.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  loadAllYaml,
  loadYaml,
  type KubernetesObject,
  type V1ClusterRoleBinding,
  type V1Container,
  type V1Deployment,
  type V1Namespace,
  type V1Service,
} from '@kubernetes/client-node';
import { readTokenFile } from '../../infra/cli/config.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const BASE = path.join(ROOT, 'infra/kubernetes/deploy');
const COMPONENT = path.join(BASE, 'components/service-monitor');
const NAMESPACE = 'etcd-remediator-system';
const packageJson = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };

/** The kinds the base holds that have no namespace; every other object must be in NAMESPACE. */
const CLUSTER_SCOPED = new Set(['Namespace', 'CustomResourceDefinition', 'ClusterRole', 'ClusterRoleBinding']);

const KUBECTL = process.env.KUBECTL ?? 'kubectl';

/** `kubectl kustomize dir`, parsed; a missing kubectl or a refused kustomization is an error that says which. */
function render(dir: string): KubernetesObject[] {
  let out: string;
  try {
    out = execFileSync(KUBECTL, ['kustomize', dir], { encoding: 'utf8', timeout: 30_000, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const { code, stderr } = error as NodeJS.ErrnoException & { stderr?: string };
    if (code === 'ENOENT')
      throw new Error(
        `${KUBECTL} not found: this test renders infra/kubernetes/deploy with the real \`kubectl kustomize\`; install kubectl (1.27 or later) or set KUBECTL to its path`,
        { cause: error },
      );
    throw new Error(`${KUBECTL} kustomize ${path.relative(ROOT, dir) || dir}: ${stderr?.trim() || String(error)}`, { cause: error });
  }
  return loadAllYaml(out) as KubernetesObject[];
}

const ofKind = <T extends KubernetesObject>(objects: KubernetesObject[], kind: string): T[] => objects.filter((o) => o.kind === kind) as T[];
const one = <T>(list: T[], what: string): T => {
  expect(list, what).toHaveLength(1);
  return list[0]!;
};
const allContainers = (deployment: V1Deployment): V1Container[] => [
  ...(deployment.spec?.template.spec?.initContainers ?? []),
  ...(deployment.spec?.template.spec?.containers ?? []),
];
/** The mount of `container` whose path holds `file`, the deepest first. */
const mountHolding = (container: V1Container, file: string) =>
  (container.volumeMounts ?? [])
    .filter((m) => file.startsWith(`${m.mountPath.replace(/\/$/, '')}/`))
    .sort((a, b) => b.mountPath.length - a.mountPath.length)[0];

interface ServiceMonitor extends KubernetesObject {
  spec: {
    selector: { matchLabels: Record<string, string> };
    endpoints: { port: string; path?: string; authorization?: { type: string; credentials: { name: string; key: string } } }[];
  };
}

// Rendered on first use inside each test, not in a beforeAll: without kubectl every test fails with
// the reason (a failed beforeAll would count them as skipped).
let rendered: { base?: KubernetesObject[]; withComponent?: KubernetesObject[] } = {};
let overlay: string | undefined;
const base = (): KubernetesObject[] => (rendered.base ??= render(BASE));
/** An overlay of the base and the component, as a platform team writes one (kustomize refuses an absolute root: both relative to it). */
const withComponent = (): KubernetesObject[] => {
  if (rendered.withComponent) return rendered.withComponent;
  overlay ??= fs.mkdtempSync(path.join(os.tmpdir(), 'kustomize-overlay-'));
  const relative = (dir: string) => path.relative(overlay!, dir);
  fs.writeFileSync(
    path.join(overlay, 'kustomization.yaml'),
    [
      'apiVersion: kustomize.config.k8s.io/v1beta1',
      'kind: Kustomization',
      `resources: [${JSON.stringify(relative(BASE))}]`,
      `components: [${JSON.stringify(relative(COMPONENT))}]`,
      '',
    ].join('\n'),
  );
  return (rendered.withComponent = render(overlay));
};

afterAll(() => {
  rendered = {};
  if (overlay) fs.rmSync(overlay, { recursive: true, force: true });
});

const deploymentOf = (objects: KubernetesObject[]) => one(ofKind<V1Deployment>(objects, 'Deployment'), 'the Deployment');
const watcherOf = (deployment: V1Deployment) =>
  one(
    (deployment.spec?.template.spec?.containers ?? []).filter((c) => c.args?.[0] === 'watch'),
    'the watcher container',
  );

describe('kubectl kustomize infra/kubernetes/deploy', () => {
  it('renders the Namespace first, then the CRDs, then the rest; every namespaced object in etcd-remediator-system', () => {
    const kinds = base().map((o) => o.kind);
    expect(kinds[0]).toBe('Namespace');
    expect(kinds.slice(1, 3)).toEqual(['CustomResourceDefinition', 'CustomResourceDefinition']);
    expect(kinds.filter((kind) => kind === 'Namespace' || kind === 'CustomResourceDefinition')).toHaveLength(3);
    const namespace = base()[0] as V1Namespace;
    expect(namespace.metadata?.name).toBe(NAMESPACE);
    expect(namespace.metadata?.labels?.['pod-security.kubernetes.io/enforce']).toBe('restricted');
    for (const object of base()) {
      const what = `${object.kind}/${object.metadata?.name}`;
      if (CLUSTER_SCOPED.has(object.kind!)) expect(object.metadata?.namespace, what).toBeUndefined();
      else expect(object.metadata?.namespace, what).toBe(NAMESPACE);
    }
    for (const binding of ofKind<V1ClusterRoleBinding>(base(), 'ClusterRoleBinding'))
      for (const subject of binding.subjects ?? []) expect(subject.namespace, `${binding.metadata?.name}: ${subject.name}`).toBe(NAMESPACE);
  });

  it("holds the management cluster's objects alone: the watcher's, not workload-rbac.yaml's", () => {
    expect([...new Set(base().map((o) => o.kind))].sort()).toEqual([
      'ClusterRole',
      'ClusterRoleBinding',
      'CustomResourceDefinition',
      'Deployment',
      'Namespace',
      'Service',
      'ServiceAccount',
    ]);
  });

  it('the CRDs are the files in deploy/crds, unchanged', () => {
    const dir = path.join(BASE, 'crds');
    const files = fs.readdirSync(dir).filter((file) => file.endsWith('.yaml'));
    expect(files).toHaveLength(2);
    const crds = ofKind(base(), 'CustomResourceDefinition');
    expect(crds.map((crd) => crd.metadata?.name).sort()).toEqual([
      'etcdremediationrequests.etcd-remediator.io',
      'etcdremediationrequesttemplates.etcd-remediator.io',
    ]);
    for (const file of files) {
      const crd = loadYaml<KubernetesObject>(fs.readFileSync(path.join(dir, file), 'utf8'));
      expect(
        crds.find((r) => r.metadata?.name === crd.metadata?.name),
        file,
      ).toEqual(crd);
    }
  });

  it("every container runs the image kustomization.yaml's images: sets, the Dockerfile's at the package version", () => {
    const { images = [] } = loadYaml<{ images?: { name: string; newName: string; newTag: string }[] }>(
      fs.readFileSync(path.join(BASE, 'kustomization.yaml'), 'utf8'),
    );
    const set = one(
      images.filter((image) => image.name === 'etcd-remediator'),
      'the images: entry etcd-remediator',
    );
    expect(set.newTag).toBe(packageJson.version);
    const containers = allContainers(deploymentOf(base()));
    expect(containers.length).toBeGreaterThan(0);
    for (const container of containers) expect(container.image, container.name).toBe(`${set.newName}:${set.newTag}`);
    expect(`${set.newName}:${set.newTag}`).toBe(`ghcr.io/example/etcd-remediator:${packageJson.version}`);
  });

  it('the pod meets the restricted Pod Security Standard, init container included', () => {
    const pod = deploymentOf(base()).spec!.template.spec!;
    expect(pod.securityContext?.runAsNonRoot).toBe(true);
    expect(pod.securityContext?.runAsUser).toBeGreaterThan(0);
    expect(pod.securityContext?.seccompProfile?.type).toBe('RuntimeDefault');
    expect(pod.hostNetwork ?? false).toBe(false);
    expect(pod.hostPID ?? false).toBe(false);
    expect(pod.hostIPC ?? false).toBe(false);
    const allowed = new Set(['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'persistentVolumeClaim', 'projected', 'secret']);
    for (const volume of pod.volumes ?? [])
      for (const [type, source] of Object.entries(volume))
        if (type !== 'name' && source !== undefined) expect(allowed, `volume ${volume.name}: ${type}`).toContain(type);
    for (const container of allContainers(deploymentOf(base()))) {
      const context = container.securityContext;
      expect(context?.allowPrivilegeEscalation, container.name).toBe(false);
      expect(context?.capabilities?.drop, container.name).toContain('ALL');
      expect(context?.capabilities?.add ?? [], container.name).toEqual([]);
      expect(context?.privileged ?? false, container.name).toBe(false);
      expect(context?.runAsNonRoot ?? true, container.name).toBe(true);
      expect(context?.runAsUser ?? 1, container.name).toBeGreaterThan(0);
      if (context?.seccompProfile) expect(context.seccompProfile.type, container.name).toBe('RuntimeDefault');
      for (const port of container.ports ?? []) expect(port.hostPort, `${container.name}: ${port.name}`).toBeUndefined();
    }
  });

  it("the Service selects the Deployment's pod and targets a port the watcher declares", () => {
    const deployment = deploymentOf(base());
    const service = one(ofKind<V1Service>(base(), 'Service'), 'the Service');
    const selector = service.spec?.selector ?? {};
    expect(Object.keys(selector).length).toBeGreaterThan(0);
    expect(deployment.spec?.template.metadata?.labels).toMatchObject(selector);
    const declared = (watcherOf(deployment).ports ?? []).filter((p) => p.protocol === undefined || p.protocol === 'TCP');
    for (const port of service.spec?.ports ?? []) {
      const target = port.targetPort ?? port.port;
      expect(
        declared.some((p) => (typeof target === 'string' ? p.name === target : p.containerPort === target)),
        `${port.name} -> ${String(target)}`,
      ).toBe(true);
    }
    // The port --health-addr listens on, which /metrics is served on.
    const args = watcherOf(deployment).args ?? [];
    const listens = Number(args[args.indexOf('--health-addr') + 1]?.split(':').at(-1));
    const metrics = one(
      (service.spec?.ports ?? []).filter((p) => p.name === 'metrics'),
      'the Service port metrics',
    );
    expect(declared.find((p) => p.name === metrics.targetPort || p.containerPort === metrics.targetPort)?.containerPort).toBe(listens);
  });

  it('serves /metrics: --metrics-token-file names a file the init container copies from the Secret etcd-remediator-metrics-token', () => {
    const deployment = deploymentOf(base());
    const pod = deployment.spec!.template.spec!;
    const watcher = watcherOf(deployment);
    const args = watcher.args ?? [];
    expect(args).toContain('--health-addr');
    expect(args).toContain('--metrics-token-file');
    const tokenFile = args[args.indexOf('--metrics-token-file') + 1]!;
    const volumeOf = (name: string) =>
      one(
        (pod.volumes ?? []).filter((v) => v.name === name),
        `volume ${name}`,
      );

    // The watcher reads it from a volume of its own, in memory, read-only.
    const watcherMount = mountHolding(watcher, tokenFile);
    expect(watcherMount, `a mount holding ${tokenFile}`).toBeDefined();
    expect(watcherMount!.readOnly).toBe(true);
    expect(volumeOf(watcherMount!.name).emptyDir?.medium).toBe('Memory');

    // The init container writes it there from the Secret's volume, key token; not optional.
    const init = one(pod.initContainers ?? [], 'the init container');
    const [to, from] = [init.command!.at(-1)!, init.command!.at(-2)!];
    const initTo = mountHolding(init, to);
    expect(initTo?.name).toBe(watcherMount!.name);
    expect(path.posix.relative(initTo!.mountPath, to)).toBe(path.posix.relative(watcherMount!.mountPath, tokenFile));
    const initFrom = mountHolding(init, from);
    const secret = volumeOf(initFrom!.name).secret;
    expect(secret?.secretName).toBe('etcd-remediator-metrics-token');
    expect(secret?.optional ?? false, 'watch exits without its token file').toBe(false);
    const item = one(secret?.items ?? [], 'the Secret volume item');
    expect(item).toMatchObject({ key: 'token', path: path.posix.relative(initFrom!.mountPath, from) });
    // The watcher never mounts the Secret itself.
    expect((watcher.volumeMounts ?? []).map((m) => m.name)).not.toContain(initFrom!.name);
  });

  it("the init container's command turns a Secret file `watch` refuses into one it accepts", () => {
    const init = one(deploymentOf(base()).spec!.template.spec!.initContainers ?? [], 'the init container');
    const command = init.command!;
    expect(command.slice(0, 2)).toEqual(['node', '-e']);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'metrics-token-'));
    try {
      // As the kubelet leaves a Secret volume's file under fsGroup: 0440 whatever defaultMode says.
      const from = path.join(dir, 'secret-token');
      const to = path.join(dir, 'token');
      const token = 'f'.repeat(64);
      fs.writeFileSync(from, token, { mode: 0o440 });
      fs.chmodSync(from, 0o440);
      expect(() => readTokenFile(from, from, '--metrics-token-file')).toThrow(/readable or writable by others/);
      execFileSync(process.execPath, [...command.slice(1, -2), from, to], { timeout: 30_000 });
      expect(fs.statSync(to).mode & 0o777).toBe(0o600);
      expect(readTokenFile(to, to, '--metrics-token-file')).toBe(token);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('renders no ServiceMonitor: a cluster without the Prometheus operator has no such kind', () => {
    expect(base().filter((o) => o.apiVersion?.startsWith('monitoring.coreos.com/'))).toEqual([]);
  });
});

describe('components/service-monitor, added by an overlay', () => {
  it('adds one ServiceMonitor to the base and changes nothing else', () => {
    const monitors = withComponent().filter((o) => o.kind === 'ServiceMonitor');
    expect(monitors.map((o) => o.apiVersion)).toEqual(['monitoring.coreos.com/v1']);
    expect(withComponent().filter((o) => o.kind !== 'ServiceMonitor')).toEqual(base());
  });

  it("scrapes the Service's metrics port at /metrics with the bearer token of the watcher's Secret", () => {
    const monitor = one(ofKind<ServiceMonitor>(withComponent(), 'ServiceMonitor'), 'the ServiceMonitor');
    const service = one(ofKind<V1Service>(withComponent(), 'Service'), 'the Service');
    expect(monitor.metadata?.namespace).toBe(service.metadata?.namespace);
    expect(service.metadata?.labels).toMatchObject(monitor.spec.selector.matchLabels);
    const endpoint = one(monitor.spec.endpoints, 'the endpoint');
    expect((service.spec?.ports ?? []).map((p) => p.name)).toContain(endpoint.port);
    expect(endpoint.path).toBe('/metrics');
    const secret = (deploymentOf(withComponent()).spec!.template.spec!.volumes ?? []).find((v) => v.secret)!.secret!;
    expect(endpoint.authorization).toEqual({ type: 'Bearer', credentials: { name: secret.secretName, key: secret.items![0]!.key } });
  });
});
