// Probes every member over every path at once, the whole probe bounded by one deadline.
import type { IdentityReport, MemberInfo, MemberList, MemberProbe, MemberStatus, PathName, PathProbe, ProbeSample } from '../../core/types.ts';
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

type Answered<T> = Answer<T> & { value: T };

const answered = <T>(answer: Answer<T>): answer is Answered<T> => answer.value !== undefined;

/** Resolves with the first answer that has a value, or undefined once every promise has given up. */
function firstAnswer<T>(answers: Promise<Answer<T>>[]): Promise<Answered<T> | undefined> {
  return new Promise((resolve) => {
    let pending = answers.length;
    if (pending === 0) resolve(undefined);
    for (const promise of answers) {
      void promise.then((answer) => {
        pending -= 1;
        if (answered(answer)) resolve(answer);
        else if (pending === 0) resolve(undefined);
      });
    }
  });
}

/** Which cluster each seed said it belongs to, from its member list and its status; one entry per endpoint and id. */
async function seedIdentities(lists: Promise<Answer<MemberList>>[], statuses: Promise<Answer<MemberStatus>>[]): Promise<IdentityReport[]> {
  const answers = await Promise.all([...lists, ...statuses]);
  const seen = new Map<string, IdentityReport>();
  for (const answer of answers) {
    const clusterId = answer.value?.clusterId;
    if (clusterId !== undefined) seen.set(`${answer.probe.endpoint} ${clusterId}`, { endpoint: answer.probe.endpoint, clusterId });
  }
  return [...seen.values()];
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

      // Every seed is heard out, within the same deadline: seeds of two clusters must be seen as such.
      const identities = seedIdentities(lists, [...seedStatuses.values()]);
      const list = await firstAnswer(lists);
      if (list === undefined) {
        return { at, members: [], listFailures: (await Promise.all(lists)).map((answer) => answer.probe), seeds: await identities };
      }

      const statusOver = (member: MemberInfo, path: PathName): Promise<Answer<MemberStatus>> | undefined => {
        const resolved = resolver.resolve(member, path);
        if (resolved === undefined) return undefined;
        const endpoint = sameEndpoint(resolved);
        const fromSeed = path === 'direct' ? seedStatuses.get(endpoint) : undefined;
        return fromSeed ?? attempt(path, endpoint, () => transport.client({ endpoint, path }).status(remaining()));
      };

      const probing = Promise.all(
        list.value.members.map(async (member): Promise<MemberProbe> => {
          const started = paths.flatMap((path) => statusOver(member, path) ?? []);
          const answers = await Promise.all(started);
          const probe: MemberProbe = { member, paths: answers.map((answer) => answer.probe) };
          // Paths are in policy order, so "first that answered" is deterministic.
          const status = answers.find((answer) => answer.value !== undefined)?.value;
          if (status) probe.status = status;
          return probe;
        }),
      );
      const [probed, said] = await Promise.all([probing, identities]);
      // Seeds of more than one cluster: whichever list came first is no more "the" cluster's than another.
      if (new Set(said.map((s) => s.clusterId)).size > 1) return { at, members: [], listFailures: [], seeds: said };
      const listedBy = { endpoint: list.probe.endpoint, clusterId: list.value.clusterId };
      return { at, members: probed, listFailures: [], seeds: said, listedBy };
    },
  };
}
