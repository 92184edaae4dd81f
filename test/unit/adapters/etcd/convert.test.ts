import type { IMember, IMemberListResponse, IStatusResponse } from 'etcd3';
import { describe, expect, it } from 'vitest';
import { toMemberInfo, toMemberList, toMemberStatus } from '../../../../functions/adapters/etcd/convert.ts';
import { hexMemberId } from '../../../../functions/adapters/etcd/member-id.ts';

const SELF = '16068973697794901265';
const PEER = '1';
/** A cluster_id as etcd3 hands it over (decimal uint64), and as etcdctl prints it. */
const CLUSTER_DECIMAL = '14841639068965178418';
const CLUSTER_HEX = 'cdf818194e3a8c32';

function statusResponse(over: Partial<IStatusResponse> = {}): IStatusResponse {
  return {
    header: { cluster_id: CLUSTER_DECIMAL, member_id: SELF, revision: '3', raft_term: '2' },
    version: '3.4.23',
    dbSize: '20480',
    leader: PEER,
    raftIndex: '10',
    raftTerm: '2',
    raftAppliedIndex: '9',
    errors: [],
    dbSizeInUse: '16384',
    isLearner: false,
    ...over,
  };
}

describe('toMemberStatus', () => {
  it('converts numbers and the leader id', () => {
    expect(toMemberStatus(statusResponse())).toEqual({
      leaderId: '1',
      raftTerm: 2,
      raftIndex: 10,
      raftAppliedIndex: 9,
      alarms: [],
      errors: [],
      version: '3.4.23',
      dbSize: 20480,
      dbSizeInUse: 16384,
      isLearner: false,
      revision: 3,
      clusterId: CLUSTER_HEX,
    });
  });

  it('attributes alarms to the member they name and keeps other errors', () => {
    const status = toMemberStatus(
      statusResponse({
        leader: '0',
        errors: ['etcdserver: no leader', `memberID:${SELF} alarm:NOSPACE `, `memberID:${PEER} alarm:CORRUPT `],
      }),
    );
    expect(status.leaderId).toBe('0');
    expect(status.alarms).toEqual(['NOSPACE']);
    // Another member's alarm is kept as its own: a NOSPACE raised by a member that is down still refuses every write.
    expect(status.othersAlarms).toEqual([{ member: hexMemberId(PEER), alarm: 'CORRUPT' }]);
    expect(status.errors).toEqual(['etcdserver: no leader']);
  });
});

describe('toMemberInfo', () => {
  it('keeps a never-started member with its empty name and no client URLs', () => {
    const member: IMember = { ID: '255', name: '', peerURLs: ['http://10.0.0.3:2380'], clientURLs: [], isLearner: true };
    expect(toMemberInfo(member)).toEqual({ id: 'ff', name: '', clientUrls: [], peerUrls: ['http://10.0.0.3:2380'], isLearner: true });
  });
});

describe('toMemberList', () => {
  it('keeps the cluster_id of the header, in hex, with the members', () => {
    const response: IMemberListResponse = {
      header: { cluster_id: CLUSTER_DECIMAL, member_id: SELF, revision: '3', raft_term: '2' },
      members: [{ ID: '255', name: 'etcd-a', peerURLs: ['http://10.0.0.1:2380'], clientURLs: ['http://10.0.0.1:2379'], isLearner: false }],
    };
    expect(toMemberList(response)).toEqual({
      clusterId: CLUSTER_HEX,
      members: [{ id: 'ff', name: 'etcd-a', clientUrls: ['http://10.0.0.1:2379'], peerUrls: ['http://10.0.0.1:2380'], isLearner: false }],
    });
  });
});
