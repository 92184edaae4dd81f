// remediate's --target: an id only when the member list has that id; otherwise a name.
import { describe, expect, it } from 'vitest';
import { targetSelector } from '../../../infra/cli/remediate.ts';

const members = [
  { id: '8e9e05c52164694d', name: 'etcd1' },
  { id: 'abc123', name: 'etcd2' },
  { id: '91bc3c398fb3c146', name: 'deadbeef' },
];

describe('remediate --target', () => {
  it.each([
    ['etcd1', { memberName: 'etcd1' }],
    ['ABC123', { memberId: 'abc123' }],
    ['8e9e05c52164694d', { memberId: '8e9e05c52164694d' }],
    // A member named like an id is still that member, by name.
    ['deadbeef', { memberName: 'deadbeef' }],
    // Hex-looking, but no member has that id: a name, which the pipeline will not find.
    ['cafe42', { memberName: 'cafe42' }],
  ])('%s in the member list is %j', (ref, selector) => expect(targetSelector(members, ref)).toEqual({ selector }));

  it('with no member list, keeps a hex-looking reference a name and says so', () => {
    const { selector, note } = targetSelector([], 'abc123');
    expect(selector).toEqual({ memberName: 'abc123' });
    expect(note).toMatch(/no endpoint answered a member list: --target abc123 is taken as a member name/);
    expect(targetSelector([], 'etcd1')).toEqual({ selector: { memberName: 'etcd1' } });
  });

  it('refuses a reference that names one member and numbers another', () => {
    expect(() => targetSelector([...members, { id: 'e7', name: 'abc123' }], 'abc123')).toThrow(
      '--target: abc123 is the name of the member with id e7 and the id of etcd2 (abc123); give e7 or etcd2 instead',
    );
  });
});
