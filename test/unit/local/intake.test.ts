// The edge of `run`: concurrent duplicates are told the one incident they all joined.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ClusterEtcd } from '../../../functions/app/deps.ts';
import { parsePolicy } from '../../../functions/core/policy.ts';
import { createIntake, type IntakeReply } from '../../../infra/local/cli/intake.ts';
import { createLocalRuntime, type LocalRuntime } from '../../../infra/local/runtime.ts';
import { createStaticDirectory } from '../../../infra/local/static-directory.ts';
import { tempDir, waitFor, type TempDir } from './helpers.ts';

// A probe that never answers: the incident stays open while the test looks at it.
const silentEtcd = (): ClusterEtcd => ({ prober: { probe: () => new Promise(() => undefined) } }) as unknown as ClusterEtcd;

describe('run intake', () => {
  let dir: TempDir;
  let runtime: LocalRuntime;

  beforeEach(async () => {
    dir = tempDir();
    runtime = await createLocalRuntime({
      statePath: dir.file('state.sqlite'),
      directory: createStaticDirectory([{ clusterId: 'c1', endpoints: ['http://127.0.0.1:1'], policy: parsePolicy() }]),
      etcdFor: silentEtcd,
      logLevel: 'SILENT',
    });
    await runtime.start();
  });
  afterEach(async () => {
    await runtime.stop({ drainTimeoutMs: 100 });
    dir.remove();
  });

  it('duplicates arriving together all get the id of the one incident that opens', async () => {
    const intake = createIntake(runtime, ['c1']);
    const line = JSON.stringify({ clusterId: 'c1', target: { memberName: 'etcd1' }, reason: 'r', source: 'stdin', observedAt: new Date().toISOString() });

    const replies = (await Promise.all([intake(line, 'stdin'), intake(line, 'stdin'), intake(line, 'stdin')])) as Extract<IntakeReply, { accepted: true }>[];

    expect(replies.every((r) => r.accepted)).toBe(true);
    const ids = new Set(replies.map((r) => r.incidentId));
    expect(ids.size).toBe(1);
    expect(replies.map((r) => r.joined)).toEqual([false, true, true]);
    await waitFor(async () => (await runtime.store.listIncidents()).length === 1, 'the incident to open');
    const [incident] = await runtime.store.listIncidents();
    expect(incident!.incidentId).toBe(replies[0]!.incidentId);
  });
});
