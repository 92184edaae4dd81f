// Probes every member over every path at once, the whole probe bounded by one deadline.
import type { IdentityReport, MemberInfo, MemberList, MemberProbe, MemberStatus, PathName, PathProbe, ProbeSample } from '../../core/common/index.ts';
import { type Clock } from '../../ports/clock.ts';
import { systemClock } from '../../lib/system-clock.ts';
import type { EndpointTarget, EtcdMemberClient, EtcdTransport, LookingPathResolver, PathLook, PathResolver, ProbeRequest, Prober } from '../../ports/etcd.ts';
import { normalizeEtcdError } from './normalize-error.ts';

interface Answer<T> {
  probe: PathProbe;
  value?: T;
}

const sameEndpoint = (endpoint: string): string => endpoint.replace(/\/+$/, '');
const keyOf = (target: EndpointTarget): string => `${target.path} ${target.endpoint}`;

/**
 * Runs one call and folds its outcome into a PathProbe; never rejects. An answer is said at the
 * endpoint it came through (`client.answeredThrough`), a failure at the one asked.
 */
async function attempt<T extends object>(
  path: PathName,
  endpoint: string,
  clientOf: () => EtcdMemberClient,
  run: (client: EtcdMemberClient) => Promise<T>,
): Promise<Answer<T>> {
  const started = performance.now();
  const latency = (): number => Math.round(performance.now() - started);
  try {
    const client = clientOf();
    const value = await run(client);
    return { probe: { path, endpoint: client.answeredThrough?.(value) ?? endpoint, reachability: 'ok', latencyMs: latency() }, value };
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
function seedIdentities(answers: Answer<MemberList | MemberStatus>[]): IdentityReport[] {
  const seen = new Map<string, IdentityReport>();
  for (const answer of answers) {
    const clusterId = answer.value?.clusterId;
    if (clusterId !== undefined) seen.set(`${answer.probe.endpoint} ${clusterId}`, { endpoint: answer.probe.endpoint, clusterId });
  }
  return [...seen.values()];
}

/** Stands for "no seed of the look answered"; it carries no value, so it never wins. */
const NO_LIST: Answer<MemberList> = { probe: { path: 'direct', endpoint: '', reachability: 'other', latencyMs: 0 } };

const isLooking = (resolver: PathResolver | LookingPathResolver): resolver is LookingPathResolver => 'look' in resolver;

/** Seeds over one path: a member list and a status, both started at once, so a seed costs one round. */
interface SeedCalls {
  lists: Promise<Answer<MemberList>>[];
  statuses: Map<string, Promise<Answer<MemberStatus>>>;
}

/**
 * `clock` stamps each sample: the same clock the grace window is measured on. A looking resolver
 * (the kube paths) looks once per probe, in parallel with the direct seeds and within the same deadline.
 */
export function createProber(transport: EtcdTransport, resolver: PathResolver | LookingPathResolver, clock: Clock = systemClock): Prober {
  return {
    async probe({ seeds, deadlineMs, paths = ['direct'] }: ProbeRequest): Promise<ProbeSample> {
      const at = clock.now();
      const endsAt = performance.now() + deadlineMs;
      const remaining = (): number => Math.max(0, Math.floor(endsAt - performance.now()));

      const calls: SeedCalls = { lists: [], statuses: new Map() };
      const startSeeds = (targets: EndpointTarget[]): Promise<Answer<MemberList>>[] =>
        targets.flatMap((target) => {
          const key = keyOf(target);
          if (calls.statuses.has(key)) return [];
          const client = transport.client(target);
          calls.statuses.set(
            key,
            attempt(
              target.path,
              target.endpoint,
              () => client,
              (c) => c.status(remaining()),
            ),
          );
          const list = attempt(
            target.path,
            target.endpoint,
            () => client,
            (c) => c.memberList(remaining()),
          );
          calls.lists.push(list);
          return [list];
        });

      // Configured seeds are client URLs, dialed directly.
      const direct = startSeeds([...new Set(seeds.map(sameEndpoint))].map((endpoint) => ({ endpoint, path: 'direct' as const })));
      const looking: Promise<PathLook> = isLooking(resolver)
        ? resolver.look(paths, remaining()).catch((error: unknown) => ({ resolve: () => undefined, seeds: [], failure: String(error) }))
        : Promise.resolve({ ...resolver, resolve: resolver.resolve.bind(resolver), seeds: [] });
      // The look's seeds join as soon as it answers; the first list from any seed wins.
      const fromLook = looking.then((look) => firstAnswer(startSeeds(look.seeds))).then((found) => found ?? NO_LIST);
      const list = await firstAnswer([...direct, fromLook]);
      const look = await looking;
      const lookFailure = { ...(look.failure ? { pathLookFailure: look.failure } : {}), ...(look.machines ? { machines: look.machines } : {}) };
      // Every seed is heard out, within the same deadline: seeds of two clusters must be seen as such.
      const allSeeds = async (): Promise<IdentityReport[]> =>
        seedIdentities(await Promise.all<Answer<MemberList | MemberStatus>>([...calls.lists, ...calls.statuses.values()]));
      if (list === undefined) {
        await fromLook;
        const listFailures = (await Promise.all(calls.lists)).map((answer) => answer.probe);
        return { at, members: [], listFailures, seeds: await allSeeds(), ...lookFailure };
      }

      const statusOver = (member: MemberInfo, path: PathName): Promise<Answer<MemberStatus>> | undefined => {
        const resolved = look.resolve(member, path);
        if (resolved === undefined) return undefined;
        const target = { endpoint: sameEndpoint(resolved), path };
        return (
          calls.statuses.get(keyOf(target)) ??
          attempt(
            path,
            target.endpoint,
            () => transport.client(target),
            (c) => c.status(remaining()),
          )
        );
      };

      const probing = Promise.all(
        list.value.members.map(async (member): Promise<MemberProbe> => {
          const started = paths.flatMap((path) => statusOver(member, path) ?? []);
          const answers = await Promise.all(started);
          const probe: MemberProbe = { member, paths: answers.map((answer) => answer.probe) };
          // Paths are in policy order, so "first that answered" is deterministic.
          const status = answers.find((answer) => answer.value !== undefined)?.value;
          if (status) probe.status = status;
          const host = look.host?.(member);
          if (host) probe.host = host;
          return probe;
        }),
      );
      const probed = await probing;
      await fromLook;
      const said = await allSeeds();
      // Seeds of more than one cluster: whichever list came first is no more "the" cluster's than another.
      if (new Set(said.map((s) => s.clusterId)).size > 1) return { at, members: [], listFailures: [], seeds: said, ...lookFailure };
      const listedBy = { endpoint: list.probe.endpoint, clusterId: list.value.clusterId };
      return { at, members: probed, listFailures: [], seeds: said, listedBy, ...lookFailure };
    },
  };
}
