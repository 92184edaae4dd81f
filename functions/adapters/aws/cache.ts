// A per-container cache of asynchronous lookups by key, for the directory's entries and the
// secrets behind them. The promise is kept, so concurrent callers share one request; a failure,
// and an undefined result, are dropped, so the next call asks again.
export function cached<T>(cacheMs: number, clock: () => number, load: (key: string) => Promise<T>): (key: string) => Promise<T> {
  const cache = new Map<string, { at: number; value: Promise<T> }>();
  return (key) => {
    const hit = cache.get(key);
    if (hit && clock() - hit.at < cacheMs) return hit.value;
    const value = load(key);
    cache.set(key, { at: clock(), value });
    const forget = () => {
      if (cache.get(key)?.value === value) cache.delete(key);
    };
    value.then((v) => (v === undefined ? forget() : undefined), forget);
    return value;
  };
}
