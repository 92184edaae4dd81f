// Small pure helpers over numbers and Maps: the one median of the house (leader hygiene's round
// trips, the benchmarks' figures, the tests'), and a Map kept to its newest entries.

/** The middle value (the mean of the two middle ones for an even count); NaN for none. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

// A Map kept to its newest entries, pure: a Map iterates in insertion order, so the first key is the
// oldest. For the small in-process memories (Events counted again, spam buckets, objects looked up).
/** Sets `key` as the newest entry of `map`, and forgets the oldest once there are more than `max`. */
export function setNewest<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > max) map.delete(map.keys().next().value as K);
}
