// etcd3 response shapes to the core vocabulary. Pure.
import type { IMember, IMemberListResponse, IStatusResponse } from 'etcd3';
import type { MemberInfo, MemberList, MemberStatus } from '../../core/common/index.ts';
import { hexClusterId, hexMemberId } from './member-id.ts';

export function toMemberInfo(member: IMember): MemberInfo {
  return {
    id: hexMemberId(member.ID),
    name: member.name,
    clientUrls: [...member.clientURLs],
    peerUrls: [...member.peerURLs],
    isLearner: member.isLearner,
  };
}

/** The list and the cluster_id of its header: which cluster this list is of. */
export const toMemberList = (response: IMemberListResponse): MemberList => ({
  clusterId: hexClusterId(response.header.cluster_id),
  members: response.members.map(toMemberInfo),
});

/** etcd's Status lists every active cluster alarm among its errors, as "memberID:<decimal> alarm:<TYPE>". */
const ALARM_ENTRY = /memberID:(\d+)\s+alarm:([A-Z_]+)/;

/**
 * Alarms are attributed to the member they name, so one member's NOSPACE does not make every
 * other member look alarmed; the remaining entries (e.g. "etcdserver: no leader") stay errors.
 */
export function toMemberStatus(response: IStatusResponse): MemberStatus {
  const self = response.header.member_id;
  const alarms: string[] = [];
  const othersAlarms: { member: string; alarm: string }[] = [];
  const errors: string[] = [];
  for (const entry of response.errors) {
    const alarm = ALARM_ENTRY.exec(entry);
    if (!alarm) errors.push(entry);
    else if (alarm[2] === undefined || alarm[2] === 'NONE') continue;
    else if (alarm[1] === self) alarms.push(alarm[2]);
    else othersAlarms.push({ member: hexMemberId(alarm[1]!), alarm: alarm[2] });
  }
  return {
    leaderId: hexMemberId(response.leader),
    raftTerm: Number(response.raftTerm),
    raftIndex: Number(response.raftIndex),
    raftAppliedIndex: Number(response.raftAppliedIndex),
    alarms,
    ...(othersAlarms.length > 0 ? { othersAlarms } : {}),
    errors,
    version: response.version,
    dbSize: Number(response.dbSize),
    // etcd before 3.4 does not send it: absent, not 0 (which would read as all free).
    ...(response.dbSizeInUse === undefined || response.dbSizeInUse === null || response.dbSizeInUse === '0'
      ? {}
      : { dbSizeInUse: Number(response.dbSizeInUse) }),
    isLearner: response.isLearner,
    ...(Number(response.header.revision) > 0 ? { revision: Number(response.header.revision) } : {}),
    clusterId: hexClusterId(response.header.cluster_id),
  };
}
