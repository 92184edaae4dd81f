// kubectl get's server-side printing of our custom resources, by the kube fake
// (test/support/fakes/kube/tables.ts) as apiextensions-apiserver's tableconvertor prints them from
// the CRDs' additionalPrinterColumns (infra/kubernetes/deploy/crds): the Table's shape over HTTP
// (the Name column first, then the printer columns with their priorities; a missing value a null
// cell; each row's object as includeObject asks), the convertor's rules on their own (default
// columns, typed cells, a jsonPath the fake cannot evaluate refused with its path), then the real
// kubectl, the oldest and the newest installed, reading it.
//
// What real kubectl showed (1.27 and 1.33 alike): a null cell prints as nothing at all, not
// `<none>` (cli-runtime's table printer prints a nil cell as empty; `<none>` is written by the
// built-in printers, server side); priority-1 columns appear under -o wide only, where the CRD puts
// them; --sort-by asks for the rows' whole objects (`?includeObject=Object`) and sorts on them.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKubeApiFake, type KubeApiFake } from '../../support/fakes/kube/api-server.ts';
import type { PrinterColumn } from '../../support/fakes/kube/crd-admission.ts';
import { KubeFakeError } from '../../support/fakes/kube/status.ts';
import type { Json, JsonObject } from '../../support/fakes/kube/patch.ts';
import { metadataOf, resourceType, type ObjectStore } from '../../support/fakes/kube/store.ts';
import { customResourceTable } from '../../support/fakes/kube/tables.ts';
import { installedKubectls, type KubectlBin } from '../../support/kubectl-bins.ts';

const run = promisify(execFile);
const REQUESTS = resourceType('etcd-remediator.io', 'etcdremediationrequests')!;
const TEMPLATES = resourceType('etcd-remediator.io', 'etcdremediationrequesttemplates')!;
const COLLECTION = '/apis/etcd-remediator.io/v1alpha1/namespaces/default/etcdremediationrequests';
/** What kubectl get sends (get.go transformRequests). */
const TABLE_ACCEPT = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';
/** Two days ago: "2d" for the next 24 hours (duration.HumanDuration), so no test is racing the clock. */
const CREATED = new Date(Date.now() - 2 * 24 * 3_600_000).toISOString();

const STATUS = {
  phase: 'Completed',
  reasonCode: 'LEADER_UNREACHABLE_PAST_GRACE',
  incidentId: 'inc-7',
  leaderMove: 'moved',
  message: 'member removed, Machine deleted',
};

function request(name: string, status?: JsonObject, labels: Record<string, string> = {}): JsonObject {
  return {
    apiVersion: 'etcd-remediator.io/v1alpha1',
    kind: 'EtcdRemediationRequest',
    metadata: { name, namespace: 'default', creationTimestamp: CREATED, labels },
    spec: { reason: 'Machine unhealthy: Node not Ready for 5m' },
    ...(status ? { status } : {}),
  };
}

/** cp-0 with a status, cp-1 without one (the watcher has not written it yet), and one template. */
function seed(store: ObjectStore): void {
  store.put(REQUESTS, request('cp-0', STATUS));
  store.put(REQUESTS, request('cp-1'));
  store.put(TEMPLATES, {
    apiVersion: 'etcd-remediator.io/v1alpha1',
    kind: 'EtcdRemediationRequestTemplate',
    metadata: { name: 'etcd', namespace: 'default', creationTimestamp: CREATED },
    spec: { template: { spec: { reason: 'control plane Machine unhealthy' } } },
  });
}

interface Table {
  kind: string;
  apiVersion: string;
  metadata: { resourceVersion: string };
  columnDefinitions: { name: string; type: string; format: string; description: string; priority: number }[];
  rows: { cells: Json[]; object: Json }[];
}

describe('kube API fake: Tables of custom resources, over HTTP', () => {
  let fake: KubeApiFake;

  beforeAll(async () => {
    fake = await startKubeApiFake();
    seed(fake.store);
  });

  afterAll(async () => {
    await fake?.stop();
  });

  const get = async (pathAndQuery: string, accept = TABLE_ACCEPT): Promise<{ status: number; body: JsonObject }> => {
    const answer = await fetch(`${fake.server}${pathAndQuery}`, { headers: { accept } });
    return { status: answer.status, body: (await answer.json()) as JsonObject };
  };
  const table = async (pathAndQuery: string): Promise<Table> => {
    const { status, body } = await get(pathAndQuery);
    expect(status, JSON.stringify(body)).toBe(200);
    return body as unknown as Table;
  };

  it('a list: the Name column, then the CRD printer columns with their priorities; a missing value a null cell; each row its PartialObjectMetadata', async () => {
    const answer = await table(COLLECTION);
    expect(answer).toMatchObject({ kind: 'Table', apiVersion: 'meta.k8s.io/v1', metadata: { resourceVersion: fake.store.resourceVersion } });
    expect(answer.columnDefinitions.map(({ name, type, format, priority }) => ({ name, type, format, priority }))).toEqual([
      { name: 'Name', type: 'string', format: 'name', priority: 0 },
      { name: 'Phase', type: 'string', format: '', priority: 0 },
      { name: 'Reason', type: 'string', format: '', priority: 0 },
      { name: 'Incident', type: 'string', format: '', priority: 0 },
      { name: 'Leader-Move', type: 'string', format: '', priority: 1 },
      { name: 'Message', type: 'string', format: '', priority: 1 },
      { name: 'Age', type: 'date', format: '', priority: 0 },
    ]);
    expect(answer.columnDefinitions[0]!.description).toMatch(/^Name must be unique within a namespace\./);
    expect(answer.columnDefinitions[1]!.description).toBe('Where the remediation stands.');
    // The CRD's Age column has no description: tableconvertor names its path.
    expect(answer.columnDefinitions[6]!.description).toBe('Custom resource definition column (in JSONPath format): .metadata.creationTimestamp');
    expect(answer.rows.map((row) => row.cells)).toEqual([
      ['cp-0', 'Completed', 'LEADER_UNREACHABLE_PAST_GRACE', 'inc-7', 'moved', 'member removed, Machine deleted', '2d'],
      ['cp-1', null, null, null, null, null, '2d'],
    ]);
    const stored = fake.store.get(REQUESTS, 'default', 'cp-0');
    expect(answer.rows[0]!.object).toEqual({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: metadataOf(stored) });
  });

  it('one object, by name and by its /status: a Table of one row at the object’s resourceVersion', async () => {
    const stored = fake.store.get(REQUESTS, 'default', 'cp-0');
    for (const at of [`${COLLECTION}/cp-0`, `${COLLECTION}/cp-0/status`]) {
      const answer = await table(at);
      expect(answer.metadata.resourceVersion).toBe(metadataOf(stored).resourceVersion);
      expect(answer.columnDefinitions).toHaveLength(7);
      expect(answer.rows.map((row) => row.cells)).toEqual([
        ['cp-0', 'Completed', 'LEADER_UNREACHABLE_PAST_GRACE', 'inc-7', 'moved', 'member removed, Machine deleted', '2d'],
      ]);
    }
  });

  it('includeObject: Object the whole object, None no object, anything else 400 (checked per row, so not for no rows)', async () => {
    const stored = fake.store.get(REQUESTS, 'default', 'cp-0');
    expect((await table(`${COLLECTION}?includeObject=Object`)).rows[0]!.object).toEqual(stored);
    expect((await table(`${COLLECTION}/cp-0?includeObject=Metadata`)).rows[0]!.object).toMatchObject({ kind: 'PartialObjectMetadata' });
    expect((await table(`${COLLECTION}?includeObject=None`)).rows.map((row) => row.object)).toEqual([null, null]);
    expect(await get(`${COLLECTION}?includeObject=Everything`)).toEqual({
      status: 400,
      body: {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'unrecognized includeObject value: "Everything"',
        reason: 'BadRequest',
        code: 400,
      },
    });
    expect((await table(`${COLLECTION}?labelSelector=none%3Dx&includeObject=Everything`)).rows).toEqual([]);
  });

  it('the template CRD: its Reason column is priority 1, then its age', async () => {
    const answer = await table('/apis/etcd-remediator.io/v1alpha1/namespaces/default/etcdremediationrequesttemplates');
    expect(answer.columnDefinitions.map(({ name, priority }) => [name, priority])).toEqual([
      ['Name', 0],
      ['Reason', 1],
      ['Age', 0],
    ]);
    expect(answer.rows.map((row) => row.cells)).toEqual([['etcd', 'control plane Machine unhealthy', '2d']]);
  });

  it('JSON asked first (-o json, -o yaml, client libraries): the list and the object themselves', async () => {
    expect((await get(COLLECTION, 'application/json')).body).toMatchObject({ kind: 'EtcdRemediationRequestList', items: [{}, {}] });
    expect((await get(`${COLLECTION}/cp-0`, 'application/json')).body).toEqual(fake.store.get(REQUESTS, 'default', 'cp-0'));
  });

  it('a single Event by name is a Table too, with the event columns', async () => {
    const events = resourceType('', 'events')!;
    fake.store.put(events, {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'cp-0.1', namespace: 'default' },
      involvedObject: { kind: 'EtcdRemediationRequest', namespace: 'default', name: 'cp-0' },
      reason: 'LEADER_MOVED',
      message: 'leadership moved',
      type: 'Normal',
      count: 1,
      firstTimestamp: CREATED,
      lastTimestamp: CREATED,
      source: { component: 'etcd-remediator' },
    });
    const answer = await table('/api/v1/namespaces/default/events/cp-0.1');
    expect(answer.columnDefinitions[0]!.name).toBe('Last Seen');
    expect(answer.rows.map((row) => row.cells)).toEqual([
      ['2d', 'Normal', 'LEADER_MOVED', 'etcdremediationrequest/cp-0', '', 'etcd-remediator', 'leadership moved', '2d', 1, 'cp-0.1'],
    ]);
  });
});

describe('tables.ts customResourceTable: tableconvertor’s rules', () => {
  const NOW = Date.parse('2026-01-03T00:00:00Z');
  const options = { kind: 'Thing', apiVersion: 'example.io/v1', now: NOW };
  const thing = (extra: JsonObject): JsonObject => ({ metadata: { name: 't', creationTimestamp: '2026-01-01T00:00:00Z' }, ...extra });
  const cellsOf = (columns: PrinterColumn[], object: JsonObject): Json[] =>
    (customResourceTable(columns, [object], '1', options).rows as JsonObject[])[0]!.cells as Json[];

  it('a CRD without printer columns prints Name and Age (serveDefaultColumnsIfEmpty)', () => {
    const answer = customResourceTable([], [thing({})], '1', options) as unknown as Table;
    expect(answer.columnDefinitions.map(({ name, type }) => [name, type])).toEqual([
      ['Name', 'string'],
      ['Age', 'date'],
    ]);
    expect(answer.columnDefinitions[1]!.description).toMatch(/^CreationTimestamp is a timestamp/);
    expect(answer.rows[0]!.cells).toEqual(['t', '2d']);
  });

  it('cells of the column’s type (cellForJSONValue), a value of another type an empty cell; a string column prints integers and booleans', () => {
    const columns: PrinterColumn[] = [
      { name: 'N', type: 'integer', jsonPath: '.spec.n' },
      { name: 'F', type: 'number', jsonPath: '.spec.f' },
      { name: 'B', type: 'boolean', jsonPath: '.spec.b' },
      { name: 'Wrong', type: 'integer', jsonPath: '.spec.s' },
      { name: 'S', type: 'string', jsonPath: '.spec.n' },
      { name: 'SB', type: 'string', jsonPath: '.spec.b' },
      { name: 'Bad', type: 'date', jsonPath: '.spec.s' },
      { name: 'Zero', type: 'date', jsonPath: '.spec.empty' },
      { name: 'Through', type: 'string', jsonPath: '.spec.s.deeper' },
    ];
    expect(cellsOf(columns, thing({ spec: { n: 3, f: 2.5, b: true, s: 'soon', empty: '' } }))).toEqual([
      't',
      3,
      2.5,
      true,
      null,
      '3',
      'true',
      '<invalid>',
      '<unknown>',
      null,
    ]);
  });

  it('a jsonPath the fake cannot evaluate, or a value it cannot print as Go would, is refused with the path', () => {
    const refusal = (columns: PrinterColumn[], object: JsonObject): string => {
      try {
        cellsOf(columns, object);
      } catch (error) {
        expect(error).toBeInstanceOf(KubeFakeError);
        return (error as KubeFakeError).status.message ?? '';
      }
      throw new Error('not refused');
    };
    expect(refusal([{ name: 'Ready', type: 'string', jsonPath: '.status.conditions[0].status' }], thing({}))).toContain(
      'jsonPath ".status.conditions[0].status" is not a simple .a.b.c path',
    );
    expect(refusal([{ name: 'Spec', type: 'string', jsonPath: '.spec' }], thing({ spec: { a: 1 } }))).toContain('at jsonPath ".spec" of Thing');
    // Even with no rows: the columns are read before any row.
    expect(() => customResourceTable([{ name: 'All', type: 'string', jsonPath: '.items[*]' }], [], '1', options)).toThrow(/\.items\[\*\]/);
  });
});

/** The oldest and the newest installed (or KUBECTL_BIN alone). */
function findKubectls(): KubectlBin[] {
  const all = installedKubectls();
  return [...new Set([all[0], all.at(-1)].filter((k): k is KubectlBin => k !== undefined))];
}

const kubectls = findKubectls();

/**
 * kubectl's table as its header names and rows of cells: each cell runs from its header's column to
 * the next one's (tabwriter left-aligns and pads), trimmed, so an empty cell is ''.
 */
function parseTable(stdout: string): { header: string[]; rows: string[][]; lines: string[] } {
  const [head = '', ...lines] = stdout.trimEnd().split('\n');
  const starts = [...head.matchAll(/\S+/g)].map((match) => match.index);
  return {
    header: head.trim().split(/\s+/),
    rows: lines.map((line) => starts.map((start, i) => line.slice(start, starts[i + 1]).trim())),
    lines,
  };
}

if (kubectls.length === 0) {
  describe('real kubectl get against the kube fake’s Tables', () => {
    it.skip('needs a kubectl: none found in the Cloud SDK bin folder or beside PATH’s, and KUBECTL_BIN is not set', () => undefined);
  });
}

for (const { bin, minor } of kubectls) {
  describe(`kubectl 1.${minor} get against the kube fake’s Tables`, () => {
    let dir: string;
    let fake: KubeApiFake;
    let kubeconfig: string;

    beforeAll(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'api-fake-tables-'));
      fake = await startKubeApiFake();
      kubeconfig = fake.writeKubeconfig(path.join(dir, 'kubeconfig'));
      seed(fake.store);
    });

    afterAll(async () => {
      await fake?.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    /** kubectl with the fake's kubeconfig and a cache of its own; its stdout, failing the test on an error. */
    const kubectl = async (...args: string[]): Promise<{ stdout: string; stderr: string }> => {
      try {
        return await run(bin, ['--kubeconfig', kubeconfig, '--cache-dir', path.join(dir, 'cache'), ...args], { timeout: 30_000 });
      } catch (error) {
        const failed = error as { stderr?: string; message: string };
        throw new Error(`kubectl ${args.join(' ')} failed: ${failed.stderr ?? failed.message}`, { cause: error });
      }
    };

    it('get etcdremediationrequests: NAME PHASE REASON INCIDENT AGE, and a request without a status prints empty cells', async () => {
      const { stdout } = await kubectl('get', 'etcdremediationrequests', '-n', 'default');
      const printed = parseTable(stdout);
      expect(printed.header).toEqual(['NAME', 'PHASE', 'REASON', 'INCIDENT', 'AGE']);
      expect(printed.rows).toEqual([
        ['cp-0', 'Completed', 'LEADER_UNREACHABLE_PAST_GRACE', 'inc-7', '2d'],
        ['cp-1', '', '', '', '2d'],
      ]);
      // Nothing at all where the value is missing: not `<none>`, not `<nil>`.
      expect(printed.lines[1]).toMatch(/^cp-1 +2d$/);
    });

    it('-o wide adds the priority-1 columns, LEADER-MOVE and MESSAGE, where the CRD puts them', async () => {
      const printed = parseTable((await kubectl('get', 'etcdremediationrequests', '-n', 'default', '-o', 'wide')).stdout);
      expect(printed.header).toEqual(['NAME', 'PHASE', 'REASON', 'INCIDENT', 'LEADER-MOVE', 'MESSAGE', 'AGE']);
      expect(printed.rows).toEqual([
        ['cp-0', 'Completed', 'LEADER_UNREACHABLE_PAST_GRACE', 'inc-7', 'moved', 'member removed, Machine deleted', '2d'],
        ['cp-1', '', '', '', '', '', '2d'],
      ]);
    });

    it('get erreq NAME (the short name, one object): the same columns, one row', async () => {
      expect(parseTable((await kubectl('get', 'erreq', 'cp-0', '-n', 'default')).stdout)).toMatchObject({
        header: ['NAME', 'PHASE', 'REASON', 'INCIDENT', 'AGE'],
        rows: [['cp-0', 'Completed', 'LEADER_UNREACHABLE_PAST_GRACE', 'inc-7', '2d']],
      });
      expect(parseTable((await kubectl('get', 'erreq', 'cp-1', '-n', 'default')).stdout).rows).toEqual([['cp-1', '', '', '', '2d']]);
    });

    it('--sort-by a status field: kubectl asks for the whole objects (includeObject=Object) and sorts the rows on them', async () => {
      for (const [name, incidentId] of [
        ['sort-a', 'inc-3'],
        ['sort-b', 'inc-1'],
        ['sort-c', 'inc-2'],
      ] as const)
        fake.store.put(REQUESTS, request(name, { ...STATUS, incidentId }, { set: 'sorted' }));
      const { stdout, stderr } = await kubectl('get', 'erreq', '-n', 'default', '-l', 'set=sorted', '--sort-by=.status.incidentId', '-v=6');
      expect(stderr).toContain('includeObject=Object');
      expect(parseTable(stdout).rows.map((row) => [row[0], row[3]])).toEqual([
        ['sort-b', 'inc-1'],
        ['sort-c', 'inc-2'],
        ['sort-a', 'inc-3'],
      ]);
    });

    it('get erreqt: NAME AGE, and REASON under -o wide', async () => {
      expect(parseTable((await kubectl('get', 'erreqt', '-n', 'default')).stdout)).toMatchObject({ header: ['NAME', 'AGE'], rows: [['etcd', '2d']] });
      expect(parseTable((await kubectl('get', 'erreqt', '-n', 'default', '-o', 'wide')).stdout)).toMatchObject({
        header: ['NAME', 'REASON', 'AGE'],
        rows: [['etcd', 'control plane Machine unhealthy', '2d']],
      });
    });
  });
}
