// A Map kept to its newest entries, pure: a Map iterates in insertion order, so the first key is the
// oldest. For the small in-process memories (Events counted again, spam buckets, objects looked up).

/** Sets `key` as the newest entry of `map`, and forgets the oldest once there are more than `max`. */
export function setNewest<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > max) map.delete(map.keys().next().value as K);
}
