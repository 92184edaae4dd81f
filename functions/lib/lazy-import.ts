// A chunk imported on first use, once for the container's life: the bundler puts each dynamic
// import in a chunk of its own, so a container that never needs it never loads it. A failed import
// is tried again on the next use, rather than failing every later invocation with this one's error.

export interface Lazy<T> {
  /** Loads it (once); every caller shares the one import. */
  readonly load: () => Promise<T>;
  /** What it loaded, or undefined before the first load resolved. */
  readonly loaded: () => T | undefined;
}

export function lazyImport<T>(importIt: () => Promise<T>): Lazy<T> {
  let value: T | undefined;
  let loading: Promise<T> | undefined;
  return {
    load: () =>
      (loading ??= importIt().then(
        (loadedValue) => (value = loadedValue),
        (error: unknown) => {
          loading = undefined;
          throw error;
        },
      )),
    loaded: () => value,
  };
}
