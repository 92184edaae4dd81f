import type { IMember, IStatusResponse } from 'etcd3';
import { describe, expect, it } from 'vitest';
import { toMemberInfo, toMemberStatus } from '../../../functions/adapters/etcd/convert.ts';

const SELF = '16068973697794901265';
const PEER = '1';

function statusResponse(over: Partial<IStatusResponse> = {}): IStatusResponse {
  return {
    header: { cluster_id: '7', member_id: SELF, revision: '3', raft_term: '2' },
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
      isLearner: false,
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
    expect(status.errors).toEqual(['etcdserver: no leader']);
  });
});

describe('toMemberInfo', () => {
  it('keeps a never-started member with its empty name and no client URLs', () => {
    const member: IMember = { ID: '255', name: '', peerURLs: ['http://10.0.0.3:2380'], clientURLs: [], isLearner: true };
    expect(toMemberInfo(member)).toEqual({ id: 'ff', name: '', clientUrls: [], peerUrls: ['http://10.0.0.3:2380'], isLearner: true });
  });
});
