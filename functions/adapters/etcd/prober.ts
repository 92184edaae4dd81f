// Probes every member over every path at once, the whole probe bounded by one deadline.
import type { MemberInfo, MemberProbe, MemberStatus, PathName, PathProbe, ProbeSample } from '../../core/types.ts';
import { systemClock, type Clock } from '../../ports/clock.ts';
import type { EtcdTransport, PathResolver, ProbeRequest, Prober } from '../../ports/etcd.ts';
import { normalizeEtcdError } from './normalize-error.ts';

interface Answer<T> {
  probe: PathProbe;
  value?: T;
}

const sameEndpoint = (endpoint: string): string => endpoint.replace(/\/+$/, '');

/** Runs one call and folds its outcome into a PathProbe; never rejects. */
async function attempt<T>(path: PathName, endpoint: string, run: () => Promise<T>): Promise<Answer<T>> {
  const started = performance.now();
  const latency = (): number => Math.round(performance.now() - started);
  try {
    const value = await run();
    return { probe: { path, endpoint, reachability: 'ok', latencyMs: latency() }, value };
  } catch (error) {
    const failure = normalizeEtcdError(error);
    return { probe: { path, endpoint, reachability: failure.kind, latencyMs: latency(), failure } };
  }
}

/** Resolves with the first fulfilled value, or undefined once every promise has given up. */
function firstAnswer<T>(answers: Promise<Answer<T>>[]): Promise<T | undefined> {
  return new Promise((resolve) => {
    let pending = answers.length;
    if (pending === 0) resolve(undefined);
    for (const answer of answers) {
      void answer.then(({ value }) => {
        pending -= 1;
        if (value !== undefined) resolve(value);
        else if (pending === 0) resolve(undefined);
      });
    }
  });
}

/** `clock` stamps each sample: the same clock the grace window is measured on. */
export function createProber(transport: EtcdTransport, resolver: PathResolver, clock: Clock = systemClock): Prober {
  return {
    async probe({ seeds, deadlineMs, paths = ['direct'] }: ProbeRequest): Promise<ProbeSample> {
      const at = clock.now();
      const endsAt = performance.now() + deadlineMs;
      const remaining = (): number => Math.max(0, Math.floor(endsAt - performance.now()));

      // Seeds are client URLs, dialed directly. Status starts now too, so a seed costs one round, not two.
      const seedEndpoints = [...new Set(seeds.map(sameEndpoint))];
      const seedClient = (endpoint: string) => transport.client({ endpoint, path: 'direct' });
      const lists = seedEndpoints.map((endpoint) =>
        attempt('direct', endpoint, () => seedClient(endpoint).memberList(remaining())),
      );
      const seedStatuses = new Map(
        seedEndpoints.map((endpoint) => [endpoint, attempt('direct', endpoint, () => seedClient(endpoint).status(remaining()))]),
      );

      const members = await firstAnswer(lists);
      if (members === undefined) {
        return { at, members: [], listFailures: (await Promise.all(lists)).map((answer) => answer.probe) };
      }

      const statusOver = (member: MemberInfo, path: PathName): Promise<Answer<MemberStatus>> | undefined => {
        const resolved = resolver.resolve(member, path);
        if (resolved === undefined) return undefined;
        const endpoint = sameEndpoint(resolved);
        const fromSeed = path === 'direct' ? seedStatuses.get(endpoint) : undefined;
        return fromSeed ?? attempt(path, endpoint, () => transport.client({ endpoint, path }).status(remaining()));
      };

      const probed = await Promise.all(
        members.map(async (member): Promise<MemberProbe> => {
          const started = paths.flatMap((path) => statusOver(member, path) ?? []);
          const answers = await Promise.all(started);
          const probe: MemberProbe = { member, paths: answers.map((answer) => answer.probe) };
          // Paths are in policy order, so "first that answered" is deterministic.
          const status = answers.find((answer) => answer.value !== undefined)?.value;
          if (status) probe.status = status;
          return probe;
        }),
      );
      return { at, members: probed, listFailures: [] };
    },
  };
}
