// The exec relay's membership calls: `member list` (a seed's view of the cluster) and
// `member remove`, with their JSON parsed into the etcd3 adapter's own shapes.
import type { IMember, IMemberListResponse } from 'etcd3';
import type { EtcdFailure, MemberId, MemberInfo, MemberList } from '../../../core/common/index.ts';
import { toMemberInfo, toMemberList } from '../../etcd/index.ts';
import { failureFromStderr } from './exec-relay-errors.ts';
import { decimalField, headerOf, isObject, parseJsonNumbersAsText, stringField, type JsonObject } from './exec-relay-json.ts';
import { globalFlags, type RelayCall } from './exec-relay-etcdctl.ts';

export const memberListArgv = (call: RelayCall): string[] => [...globalFlags(call), 'member', 'list'];

export function memberRemoveArgv(call: RelayCall, id: MemberId): string[] {
  if (!/^[0-9a-f]{1,16}$/.test(id)) throw new RangeError(`not a hex member id: ${id}`);
  return [...globalFlags(call), 'member', 'remove', id];
}

const unreadable = (what: string, detail: string): EtcdFailure => ({ kind: 'other', message: `unreadable etcdctl ${what} output: ${detail}` });

function urls(member: JsonObject, key: string): string[] {
  const value = member[key] ?? [];
  if (!Array.isArray(value) || !value.every((url): url is string => typeof url === 'string')) throw new TypeError(`${key} is not a list of URLs`);
  return value;
}

/** Go omits empty fields: no name until the member started, no clientURLs, isLearner only when true. */
function toMember(member: unknown): IMember {
  if (!isObject(member)) throw new TypeError(`not a member: ${JSON.stringify(member)}`);
  return {
    ID: decimalField(member, 'ID'),
    name: stringField(member, 'name'),
    peerURLs: urls(member, 'peerURLs'),
    clientURLs: urls(member, 'clientURLs'),
    isLearner: member['isLearner'] === 'true' || member['isLearner'] === true,
  };
}

function toListResponse(text: string): IMemberListResponse {
  const parsed = parseJsonNumbersAsText(text);
  if (!isObject(parsed) || !isObject(parsed['header']) || !Array.isArray(parsed['members']))
    throw new TypeError(`expected a header and members, got ${text.trim()}`);
  return {
    header: headerOf(parsed['header']),
    members: parsed['members'].map(toMember),
  };
}

function parsed<T>(what: string, stdout: string, stderr: string, exitCode: number | null, read: (response: IMemberListResponse) => T): T | EtcdFailure {
  if (exitCode !== 0) return failureFromStderr(stderr, exitCode);
  try {
    return read(toListResponse(stdout));
  } catch (error) {
    return unreadable(what, error instanceof Error ? error.message : String(error));
  }
}

/** `member list -w json`: the list with its header's cluster_id, as the etcd3 adapter gives it. */
export const parseMemberList = (stdout: string, stderr: string, exitCode: number | null): MemberList | EtcdFailure =>
  parsed('member list', stdout, stderr, exitCode, toMemberList);

/** `member remove -w json`: the members left. */
export const parseMemberRemove = (stdout: string, stderr: string, exitCode: number | null): MemberInfo[] | EtcdFailure =>
  parsed('member remove', stdout, stderr, exitCode, (response) => response.members.map(toMemberInfo));
