// Records written whole under a version (leader hygiene's, maintenance's): of two writers that
// read one version, one writes.

/**
 * The version a save writes: one past the version it read (0 when nothing is stored yet). Throws
 * naming expectVersion when it is not a whole number ≥ 0, so a bad caller is not told "conflict".
 */
export function nextRecordVersion(expectVersion: number): number {
  if (!Number.isSafeInteger(expectVersion) || expectVersion < 0)
    throw new RangeError(`expectVersion must be a whole number ≥ 0 (0: no record stored yet), got ${expectVersion}`);
  return expectVersion + 1;
}
