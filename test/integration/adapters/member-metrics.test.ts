// Leader hygiene's scrape on real etcd: every member's /metrics and Status, twice a second apart
// under a background writer, read into signals; over client TLS as kubeadm serves it; a member
// cut off fails alone and named. The parser is held to the Prometheus client's own on a live scrape.
import fs from 'node:fs';
import { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEtcd3Transport } from '../../../functions/adapters/etcd/index.ts';
import { etcd3Options } from '../../../functions/adapters/etcd/member-client.ts';
import { createDirectMemberMetrics, memberMetricsOf } from '../../../functions/adapters/etcd/member-metrics.ts';
import { signalsBetween } from '../../../functions/core/hygiene/hygiene-signals-from.ts';
import type { MemberInfo } from '../../../functions/core/common/types.ts';
import { parsePrometheusText } from '../../../functions/lib/prometheus-text.ts';
import type { EtcdTransport, TlsFiles } from '../../../functions/ports/etcd.ts';
import { scrapeEvery, type ScrapeOutcome } from '../../../functions/app/view/scrape-members.ts';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { freePort } from '../../../infra/lab/free-port.ts';
import { startLab, type Lab } from '../../../infra/lab/lab.ts';
import { parseExposition } from '../../support/prometheus-text.ts';

const DEADLINE_MS = 2_000;

const infoOf = (lab: Lab): MemberInfo[] =>
  lab.members.map((m) => ({ id: m.id, name: m.name, clientUrls: [m.clientUrl], peerUrls: [m.peerUrl], isLearner: m.isLearner }));

const scraped = (outcomes: ScrapeOutcome[]) =>
  outcomes.map((o) => {
    if ('error' in o) throw o.error;
    return o.scrape;
  });

/** Puts keys until stopped, so the interval has fsyncs and commits to measure. */
function backgroundWriter(lab: Lab): { stop(): Promise<number> } {
  // The adapters' own options: over TLS, no server name for an IP host.
  const client = new Etcd3(etcd3Options(lab.members[0]!.directUrl, lab.tls ? { tls: tlsOf(lab) } : {}));
  let running = true;
  let puts = 0;
  const loop = (async () => {
    while (running) {
      await client.put(`hygiene/${puts % 50}`).value(String(puts));
      puts += 1;
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      client.close();
      return puts;
    },
  };
}

const tlsOf = (lab: Lab): TlsFiles => ({
  ca: fs.readFileSync(lab.tls!.caFile),
  cert: fs.readFileSync(lab.tls!.certFile),
  key: fs.readFileSync(lab.tls!.keyFile),
});

/** Two scrapes of every member about a second apart, under a writer; both kept. */
async function twoScrapes(lab: Lab, transport: EtcdTransport, tls?: TlsFiles) {
  const metrics = createDirectMemberMetrics({ transport, ...(tls ? { tls } : {}) });
  const members = infoOf(lab);
  const writer = backgroundWriter(lab);
  try {
    const earlier = scraped(await scrapeEvery(metrics, members, DEADLINE_MS));
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const later = scraped(await scrapeEvery(metrics, members, DEADLINE_MS));
    return { members, earlier, later };
  } finally {
    expect(await writer.stop()).toBeGreaterThan(0);
  }
}

/** etcd starts a peer's round-trip series at its first probe, seconds after boot. */
async function untilPeerRoundTripsSeen(lab: Lab, transport: EtcdTransport, tls?: TlsFiles): Promise<void> {
  const metrics = createDirectMemberMetrics({ transport, ...(tls ? { tls } : {}) });
  await waitFor(
    async () =>
      scraped(await scrapeEvery(metrics, infoOf(lab), DEADLINE_MS)).every((s) => Object.keys(s.peerRoundTrip).length === lab.members.length - 1)
        ? true
        : undefined,
    { timeoutMs: 10_000, intervalMs: 250, what: "every member to report its peers' round trips" },
  );
}

async function expectSaneSignals(lab: Lab, transport: EtcdTransport, tls?: TlsFiles): Promise<void> {
  await untilPeerRoundTripsSeen(lab, transport, tls);
  const { members, earlier, later } = await twoScrapes(lab, transport, tls);
  const leader = await lab.leader();
  const signals = earlier.map((e, i) => signalsBetween(e, later[i]!));
  expect(signals.filter((s) => s.isLeader).map((s) => s.memberId)).toEqual([leader.id]);
  members.forEach((member, i) => {
    const [e, l, s] = [earlier[i]!, later[i]!, signals[i]!];
    expect(l.memberId).toBe(member.id);
    expect(l.leaderId).toBe(leader.id);
    expect(l.hasLeader).toBe(true);
    expect(l.walFsync.count, member.name).toBeGreaterThan(e.walFsync.count);
    expect(l.raftAppliedIndex).toBeLessThanOrEqual(l.raftIndex);
    expect(l.alarms).toEqual([]);
    expect(Object.keys(l.peerRoundTrip).sort()).toEqual(
      members
        .filter((m) => m.id !== member.id)
        .map((m) => m.id)
        .sort(),
    );
    expect(s.restarted).toBe(false);
    expect(s.intervalMs).toBeGreaterThanOrEqual(1_000);
    for (const figure of [s.walFsyncMean, s.walFsyncP99, s.backendCommitMean, s.backendCommitP99]) {
      expect(figure, member.name).toBeGreaterThan(0);
      expect(figure, member.name).toBeLessThan(1);
    }
    // etcd probes a peer's round trip every few seconds: a second may hold none.
    if (s.peerRoundTripP99 !== undefined) expect(s.peerRoundTripP99).toBeLessThan(1);
    expect(s.heartbeatSendFailures).toBeGreaterThanOrEqual(0);
  });
}

// Both labs boot at once: each waits seconds for its first peer probes, and those waits overlap.
let plainLab: Promise<Lab>;
let tlsLab: Promise<Lab>;
/** etcd1 of the plain lab also serves /metrics where kubeadm has it, on a plain-http loopback listener of its own. */
let metricsListener: string;
beforeAll(async () => {
  metricsListener = `http://127.0.0.1:${await freePort()}`;
  plainLab = startLab({ members: 3, memberArgs: { etcd1: [`--listen-metrics-urls=${metricsListener}`] } });
  tlsLab = startLab({ members: 3, tls: true });
  // Either may fail; the describe that needs it says so.
  plainLab.catch(() => undefined);
  tlsLab.catch(() => undefined);
});
afterAll(async () => {
  await Promise.allSettled([plainLab, tlsLab].map(async (lab) => (await lab).down()));
});

describe('member metrics over plain http', () => {
  let lab: Lab;
  let transport: EtcdTransport;
  beforeAll(async () => {
    lab = await plainLab;
    transport = createEtcd3Transport();
  });
  afterAll(async () => {
    await transport?.close();
  });

  it('scrapes every member twice a second apart into sane signals', async () => {
    await expectSaneSignals(lab, transport);
  });

  it('reads a live etcd scrape as the Prometheus client does, sample for sample', async () => {
    const text = await (await fetch(`${lab.members[0]!.directUrl}/metrics`)).text();
    // The Python client names every counter's sample _total, as OpenMetrics does; etcd 3.4 writes some without.
    const ours = parsePrometheusText(text).flatMap((f) =>
      f.samples.map((s) => ({ name: f.type === 'counter' && !s.name.endsWith('_total') ? `${s.name}_total` : s.name, labels: s.labels, value: s.value })),
    );
    const theirs = parseExposition(text).flatMap((f) => f.samples);
    expect(ours.length).toBeGreaterThan(500);
    expect(ours).toEqual(theirs);
    expect(ours.some((s) => s.name === 'etcd_network_peer_round_trip_time_seconds_bucket' && s.labels.To !== undefined && s.labels.le === '+Inf')).toBe(true);
  });

  it('fails a member cut off alone, naming it and its URL, while the others answer', async () => {
    const cut = lab.members[1]!;
    await lab.fault(cut.name, 'cut');
    try {
      const outcomes = await scrapeEvery(createDirectMemberMetrics({ transport }), infoOf(lab), 1_000);
      const failed = outcomes.filter((o) => 'error' in o);
      expect(failed.map((o) => o.member.name)).toEqual([cut.name]);
      const { error } = failed[0] as { error: Error & { url: string } };
      expect(error.message).toMatch(new RegExp(`^member ${cut.name} \\(${cut.id}\\): GET ${cut.clientUrl}/metrics: .*ECONNREFUSED`));
      expect(error.url).toBe(`${cut.clientUrl}/metrics`);
      expect(outcomes.filter((o) => 'scrape' in o)).toHaveLength(2);
    } finally {
      await lab.fault(cut.name, 'heal');
    }
  });

  it('gives up on a member that accepts and never answers at the deadline, the others answering', async () => {
    const silent = lab.members[2]!;
    await lab.fault(silent.name, 'blackhole');
    try {
      const started = performance.now();
      const outcomes = await scrapeEvery(createDirectMemberMetrics({ transport }), infoOf(lab), 500);
      expect(performance.now() - started).toBeLessThan(1_000);
      const failed = outcomes.filter((o) => 'error' in o);
      expect(failed.map((o) => o.member.name)).toEqual([silent.name]);
      expect((failed[0] as { error: Error }).error.message).toBe(
        `member ${silent.name} (${silent.id}): GET ${silent.clientUrl}/metrics: no answer within the 500 ms deadline`,
      );
    } finally {
      await lab.fault(silent.name, 'heal');
    }
  });

  it('reads metrics at the metrics URL the cluster names for a member (--listen-metrics-urls), by name or id', async () => {
    const member = lab.members[0]!;
    const [wrong] = await scrapeEvery(memberMetricsOf({ metricsUrls: { [member.name]: 'http://127.0.0.1:1/' } }, transport), [infoOf(lab)[0]!], 1_000);
    expect(wrong && 'error' in wrong && wrong.error.message).toMatch(/GET http:\/\/127\.0\.0\.1:1\/metrics: .*ECONNREFUSED/);
    for (const key of [member.name, member.id]) {
      const [answered] = await scrapeEvery(memberMetricsOf({ metricsUrls: { [key]: metricsListener } }, transport), [infoOf(lab)[0]!], DEADLINE_MS);
      if (answered && 'error' in answered) throw answered.error;
      expect(answered && 'scrape' in answered && answered.scrape.memberId).toBe(member.id);
    }
  });
});

describe('member metrics over client TLS, as kubeadm serves the client port', () => {
  let lab: Lab;
  let transport: EtcdTransport;
  beforeAll(async () => {
    lab = await tlsLab;
    transport = createEtcd3Transport({ tls: tlsOf(lab) });
  });
  afterAll(async () => {
    await transport?.close();
  });

  it('scrapes every member over https with the client certificate', async () => {
    await expectSaneSignals(lab, transport, tlsOf(lab));
  });

  it('says which member and URL refused a scrape without a client certificate', async () => {
    const { ca } = tlsOf(lab);
    const tls = { ca, sources: { ca: lab.tls!.caFile } };
    const [outcome] = await scrapeEvery(createDirectMemberMetrics({ transport, tls }), infoOf(lab).slice(0, 1), DEADLINE_MS);
    expect(outcome && 'error' in outcome && outcome.error.message).toMatch(
      new RegExp(
        `^member ${lab.members[0]!.name} \\(${lab.members[0]!.id}\\): GET ${lab.members[0]!.clientUrl}/metrics: .*bad certificate.* \\(the server requires a client certificate: give --cert and --key`,
      ),
    );
  });
});
