// Where pause and resume write, and status reads: a local state file (--state) or a deployed
// stack's table (--table), exactly one; and who a person is when --by does not say ($USER@hostname).
import fs from 'node:fs';
import os from 'node:os';
import { openSqliteStore } from '../../functions/adapters/local/sqlite-store.ts';
import type { FleetPauses, FleetRecords } from '../../functions/ports/fleet.ts';
import { UsageError } from './args.ts';
import { escapeControls } from './control-chars.ts';

export const fleetTargetFlags = {
  state: { type: 'string' },
  table: { type: 'string' },
  region: { type: 'string' },
} as const;

export interface FleetTarget {
  records: FleetRecords;
  /** "state file F" or "table T". */
  where: string;
  close(): Promise<void>;
}

export async function openFleetTarget(values: { state?: string | undefined; table?: string | undefined; region?: string | undefined }): Promise<FleetTarget> {
  if (checkOneTarget(values) === 'table') return openDeployedTable(values.table!, values.region);
  // A mistyped path must not make a new file that nothing reads: the pause would hold nothing.
  if (!fs.existsSync(values.state!)) throw new UsageError(`--state: no state file at ${values.state} (give the state file of run or remediate)`);
  const store = openSqliteStore({ path: values.state! });
  return { records: store, where: `state file ${values.state}`, close: () => store.close() };
}

/** Which of --state and --table was given, exactly one; each refusal names the flag. */
export function checkOneTarget(values: { state?: string | undefined; table?: string | undefined; region?: string | undefined }): 'state' | 'table' {
  if (values.state !== undefined && values.table !== undefined)
    throw new UsageError('--state and --table: give one, the local state file or the deployed stack’s table');
  if (values.region !== undefined && values.table === undefined) throw new UsageError('--region goes with --table (a deployed stack’s table)');
  if (values.table !== undefined) {
    if (values.table.trim() === '') throw new UsageError('--table: a table name is required (e.g. --table etcd-remediator-incidents)');
    return 'table';
  }
  if (values.state === undefined || values.state.trim() === '') throw new UsageError('--state FILE or --table NAME is required (e.g. --state state.sqlite)');
  return 'state';
}

/** A deployed stack's table; the AWS SDK is loaded only when --table is given (a local command starts without it). */
export const openDeployedTable = async (table: string, region: string | undefined) => (await import('./deployed-table.ts')).openDeployedTable(table, region);

/** The pauses of a state file, read only; a file that is not there holds none. */
export async function pausesInStateFile(file: string): Promise<FleetPauses> {
  if (!fs.existsSync(file)) throw new UsageError(`--state: no state file at ${file}`);
  const store = openSqliteStore({ path: file, readOnly: true });
  try {
    return await store.fleetPauses();
  } finally {
    await store.close();
  }
}

/** Who a person is by default: $USER@hostname. */
export const defaultWho = (): string => `${process.env.USER || os.userInfo().username}@${os.hostname()}`;

/** --by or --why given empty, or with control characters, is refused naming the flag. */
export function textFlag(name: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (value.trim() === '') throw new UsageError(`--${name}: must not be empty`);
  if (escapeControls(value) !== value) throw new UsageError(`--${name}: must be one line of text, without control characters`);
  if (value.length > 500) throw new UsageError(`--${name}: at most 500 characters, got ${value.length}`);
  return value;
}
