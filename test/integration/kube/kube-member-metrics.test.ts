// Leader hygiene's scrape through Kubernetes, on a real 3-member lab over client TLS behind the
// protocol-level fake API server: each member serves plain /metrics on a port of its own, named
// in its pod's --listen-metrics-urls as kubeadm's 127.0.0.1:2381 is, and reached by a
// port-forward to that pod port; Status over the pod's port-forward client. A closed metrics port
// fails its member alone, named; a pod without the flag is read on its client port over TLS; a
// member without a pod of its own (the exec relay only) is told the relay cannot read /metrics.
import { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { etcd3Options } from '../../../functions/adapters/etcd/member-client.ts';
import { createKubeEtcd } from '../../../functions/adapters/kube/kube-etcd.ts';
import { RELAY_CANNOT_SCRAPE } from '../../../functions/adapters/kube/kube-member-metrics.ts';
import type { MemberScrape } from '../../../functions/core/hygiene/hygiene-signals.ts';
import type { MemberInfo } from '../../../functions/core/common/types.ts';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import type { ClusterEtcd } from '../../../functions/ports/cluster-etcd.ts';
import { scrapeEvery, type ScrapeOutcome } from '../../../functions/app/view/scrape-members.ts';
import { freePort } from '../../../infra/lab/free-port.ts';
import { resourceType } from '../../support/fakes/kube/store.ts';
import { startKubeWorld, worldEtcdTls, type KubeWorld } from './kube-world.ts';

const DEADLINE_MS = 3_000;
const PODS = resourceType('', 'pods')!;

let world: KubeWorld;
let metricsPorts: Map<string, number>;
beforeAll(async () => {
  world = await startKubeWorld(3, { metricsListeners: true });
  // What each pod says, as the product reads it.
  metricsPorts = new Map(
    world.lab.members.map((m) => {
      const pod = world.fake.store.get(PODS, 'kube-system', `etcd-${m.name}`) as { spec: { containers: { command: string[] }[] } };
      const flag = pod.spec.containers[0]!.command.find((arg) => arg.startsWith('--listen-metrics-urls='))!;
      return [m.name, Number(new URL(flag.slice('--listen-metrics-urls='.length)).port)];
    }),
  );
}, 120_000);
afterAll(async () => {
  await world?.down();
});

const infoOf = (w: KubeWorld): MemberInfo[] =>
  w.lab.members.map((m) => ({ id: m.id, name: m.name, clientUrls: [m.clientUrl], peerUrls: [m.peerUrl], isLearner: m.isLearner }));

/** A kube access of its own per test: its shared look at the pods is then this test's. */
async function withKube<T>(use: (kube: ClusterEtcd) => Promise<T>): Promise<T> {
  const kube = createKubeEtcd(world.access, { guardPrefix: '/etcd-remediator-test', callTimeoutMs: DEADLINE_MS });
  try {
    return await use(kube);
  } finally {
    await kube.close();
  }
}

const scraped = (outcomes: ScrapeOutcome[]): MemberScrape[] =>
  outcomes.map((o) => {
    if ('error' in o) throw o.error;
    return o.scrape;
  });

const failedOf = (outcomes: ScrapeOutcome[]) =>
  outcomes.flatMap((o) => ('error' in o ? [{ name: o.member.name, message: o.error.message, url: o.error.url }] : []));

describe('member metrics through Kubernetes', () => {
  it('reads every member through a port-forward to its pod’s metrics port: one leader, WAL fsyncs that grow under puts', async () => {
    await withKube(async (kube) => {
      expect(kube.metrics).toBeDefined();
      const members = infoOf(world);
      const before = scraped(await scrapeEvery(kube.metrics!, members, DEADLINE_MS));
      const leader = await world.lab.leader();
      expect(before.filter((s) => s.isLeader).map((s) => s.memberId)).toEqual([leader.id]);
      expect(before.map((s) => s.memberId)).toEqual(members.map((m) => m.id));
      expect(before.every((s) => s.hasLeader && s.leaderId === leader.id)).toBe(true);
      // Every metrics connection went to the pod port its flag names, none to the client port.
      const forwards = world.fake.upgrades
        .filter((u) => u.path.endsWith('/portforward'))
        .map((u) => `${u.path.split('/')[6]}:${new URLSearchParams(u.query).get('ports')}`);
      for (const m of world.lab.members) expect(forwards).toContain(`etcd-${m.name}:${metricsPorts.get(m.name)}`);

      const client = new Etcd3(etcd3Options(leader.directUrl, worldEtcdTls(world)));
      try {
        for (let i = 0; i < 10; i += 1) await client.put(`hygiene/kube/${i}`).value(String(i));
      } finally {
        client.close();
      }
      const grown = await waitFor(
        async () => {
          const after = scraped(await scrapeEvery(kube.metrics!, members, DEADLINE_MS));
          // The leader syncs each of the 10 puts (each awaited, so each proposed alone); a follower may
          // receive several in one append and sync them once when it lags (a busy machine), so it only
          // has to have grown.
          const grew = (s: (typeof after)[number], i: number) => s.walFsync.count - before[i]!.walFsync.count >= (s.isLeader ? 10 : 1);
          return after.every(grew) ? after : undefined;
        },
        { timeoutMs: 10_000, intervalMs: 200, what: 'the leader’s WAL fsync count to grow by the 10 puts, and every follower’s to grow' },
      );
      expect(grown.filter((s) => s.isLeader).map((s) => s.memberId)).toEqual([leader.id]);
    });
  });

  it('a pod whose metrics port is closed fails that member alone, naming the pod, the port and why; the others answer', async () => {
    const closed = world.lab.members[1]!;
    const port = metricsPorts.get(closed.name)!;
    // Nothing listens there: the kubelet's port-forward says connection refused.
    world.fake.setPortUpstream(closed.name, port, { host: '127.0.0.1', port: await freePort() });
    try {
      await withKube(async (kube) => {
        const outcomes = await scrapeEvery(kube.metrics!, infoOf(world), DEADLINE_MS);
        const failed = failedOf(outcomes);
        expect(failed.map((f) => f.name)).toEqual([closed.name]);
        expect(failed[0]!.url).toBe(`kube-system/etcd-${closed.name}:${port}/metrics`);
        expect(failed[0]!.message).toMatch(
          new RegExp(
            `^member ${closed.name} \\(${closed.id}\\): GET kube-system/etcd-${closed.name}:${port}/metrics: .*nothing listens on port ${port} in the pod`,
          ),
        );
        expect(outcomes.filter((o) => 'scrape' in o)).toHaveLength(2);
      });
    } finally {
      world.fake.setPortUpstream(closed.name, port, { host: '127.0.0.1', port });
    }
  });

  describe('a pod that names no plain metrics URL', () => {
    const member = () => world.lab.members[2]!;
    let original: ReturnType<typeof world.fake.store.get>;
    beforeAll(() => {
      original = world.fake.store.get(PODS, 'kube-system', `etcd-${member().name}`);
    });
    afterAll(() => {
      world.fake.store.put(PODS, original);
    });

    it('is read on its client port, over the TLS the kube path’s etcd client uses', async () => {
      const pod = structuredClone(original) as { spec: { containers: Record<string, unknown>[] } };
      delete pod.spec.containers[0]!.command;
      world.fake.store.put(PODS, pod as typeof original);
      const upgradesBefore = world.fake.upgrades.length;
      await withKube(async (kube) => {
        const [answered] = await scrapeEvery(kube.metrics!, [infoOf(world)[2]!], DEADLINE_MS);
        if (answered && 'error' in answered) throw answered.error;
        expect(answered && 'scrape' in answered && answered.scrape.memberId).toBe(member().id);
      });
      const ports = world.fake.upgrades
        .slice(upgradesBefore)
        .filter((u) => u.path.endsWith(`/etcd-${member().name}/portforward`))
        .map((u) => new URLSearchParams(u.query).get('ports'));
      expect(ports.length).toBeGreaterThan(0);
      expect(new Set(ports)).toEqual(new Set(['2379']));
    });

    it('a member with no pod of its own, reached by the exec relay only, is told the relay cannot read /metrics', async () => {
      world.fake.store.remove(PODS, 'kube-system', `etcd-${member().name}`);
      await withKube(async (kube) => {
        const outcomes = await scrapeEvery(kube.metrics!, infoOf(world), DEADLINE_MS);
        expect(failedOf(outcomes)).toEqual([
          { name: member().name, url: member().clientUrl, message: `member ${member().name} (${member().id}): ${RELAY_CANNOT_SCRAPE}` },
        ]);
      });
    });
  });
});
