// A path's name as it comes in at an edge (a policy, --paths, an event): one of PATH_NAMES, exactly.
// Anything else is refused, naming the names there are. Pure.
import { z } from 'zod';
import { PATH_NAMES, type PathName } from './types.ts';

/** A name as given, to a path; undefined when it is none. A list lookup, not a property one: "toString" is no path. */
export const pathNameOf = (name: string): PathName | undefined => PATH_NAMES.find((path) => path === name);

/** A path name as an edge parses it; a refusal offers every name there is. */
export const pathNameSchema = z.enum(PATH_NAMES, {
  error: (issue) => (issue.input === undefined ? undefined : `must be one of ${PATH_NAMES.map((name) => JSON.stringify(name)).join(', ')}`),
});
