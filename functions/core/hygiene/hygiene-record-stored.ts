// How both stores keep a leader-hygiene record: as JSON text under a version. The text is written
// so that it reads back exactly: every histogram's last bucket is bounded by +Inf, which plain
// JSON.stringify writes as null, and a bound read back as null differs from the next scrape's, so
// every interval would read as a restart. Pure.
import type { HygieneRecord } from './hygiene-record.ts';

/** A non-finite number in the text: an object no record holds otherwise (its maps are keyed by member id). */
const NON_FINITE = '$nonFinite';

export function hygieneRecordText(record: HygieneRecord): string {
  return JSON.stringify(record, (_key, value: unknown) => (typeof value === 'number' && !Number.isFinite(value) ? { [NON_FINITE]: String(value) } : value));
}

/** The record a store wrote; `where` names it in the error when the text is not one. */
export function hygieneRecordFromText(text: string, where: string): HygieneRecord {
  const record: unknown = JSON.parse(text, (_key, value: unknown) => (isNonFinite(value) ? Number(value[NON_FINITE]) : value));
  if (typeof record !== 'object' || record === null) throw new TypeError(`${where}: the stored record is not an object`);
  const fields = record as Record<string, unknown>;
  for (const name of ['lastScrapes', 'samples'] as const) {
    if (typeof fields[name] !== 'object' || fields[name] === null || Array.isArray(fields[name]))
      throw new TypeError(`${where}: the stored record's ${name} is not a map`);
  }
  if (!Array.isArray(fields.moves)) throw new TypeError(`${where}: the stored record's moves is not a list`);
  return record as HygieneRecord;
}

function isNonFinite(value: unknown): value is { [NON_FINITE]: string } {
  if (typeof value !== 'object' || value === null) return false;
  const keys = Object.keys(value);
  return keys.length === 1 && keys[0] === NON_FINITE && ['Infinity', '-Infinity', 'NaN'].includes(String((value as Record<string, unknown>)[NON_FINITE]));
}
