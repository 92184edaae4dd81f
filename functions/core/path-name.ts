// A path's name as earlier builds wrote it. The exec relay was once stored as `exec`: shipped state
// files, DynamoDB items, registrations, run configs and in-flight events still say so. Each edge
// where a path name comes in (a policy, --paths, an event, a stored view) turns it into the current
// name here, once, so nothing past the edge knows the old one. Pure.
import { z } from 'zod';
import { PATH_NAMES, type PathName, type PathProbe } from './types.ts';
import type { ClusterView, MemberView } from './view.ts';

/** Old spelling → current name. Only read, never written. */
const EARLIER_NAMES = { exec: 'exec-relay' } as const satisfies Record<string, PathName>;

export type EarlierPathName = keyof typeof EARLIER_NAMES;
/** A path name as it may come in: the current one, or the one an earlier build wrote. */
export type PathSpelling = PathName | EarlierPathName;

/** Every spelling an edge accepts, current names first (their order is PATH_NAMES'). */
export const PATH_SPELLINGS = [...PATH_NAMES, ...(Object.keys(EARLIER_NAMES) as EarlierPathName[])] as const satisfies readonly PathSpelling[];

const isEarlier = (name: PathSpelling): name is EarlierPathName => Object.hasOwn(EARLIER_NAMES, name);

/** The current name of a path, however it was written. */
export const currentPathName = (name: PathSpelling): PathName => (isEarlier(name) ? EARLIER_NAMES[name] : name);

/** A name as given, to a path; undefined when it is none. A list lookup, not a property one: "toString" is no path. */
export function pathNameOf(name: string): PathName | undefined {
  return (PATH_SPELLINGS as readonly string[]).includes(name) ? currentPathName(name as PathSpelling) : undefined;
}

/**
 * A path name as an edge parses it (a policy, an event): either spelling in, the current name out.
 * A transform after the enum, not a preprocess before it, so the JSON Schema of the input is still
 * the enum of every spelling. A refusal offers the current names only.
 */
export const pathNameSchema = z
  .enum(PATH_SPELLINGS, {
    error: (issue) => (issue.input === undefined ? undefined : `must be one of ${PATH_NAMES.map((name) => JSON.stringify(name)).join(', ')}`),
  })
  .transform(currentPathName);

/** A probe as a store may hold it: written by an earlier build, its path under an old name. */
type StoredProbe = Omit<PathProbe, 'path'> & { path: PathSpelling };

/** A cluster view as a store may hold it. */
export type StoredView = Omit<ClusterView, 'members' | 'listFailures'> & {
  members: (Omit<MemberView, 'paths'> & { paths: StoredProbe[] })[];
  listFailures: StoredProbe[];
};

const currentProbe = (probe: StoredProbe): PathProbe => ({ ...probe, path: currentPathName(probe.path) });

/** A stored view with every path under its current name; the rest as stored. */
export function currentView(view: StoredView): ClusterView {
  return {
    ...view,
    members: view.members.map((member) => ({ ...member, paths: member.paths.map(currentProbe) })),
    listFailures: view.listFailures.map(currentProbe),
  };
}
