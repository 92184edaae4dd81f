// Values as a build from before exec-relay had one name wrote them: the path called `exec`.

/** `value` as JSON text an earlier build would have written: every `path` that is exec-relay says `exec`. */
export const writtenByEarlierBuild = (value: unknown): string =>
  JSON.stringify(value, (key, field: unknown) => (key === 'path' && field === 'exec-relay' ? 'exec' : field));
