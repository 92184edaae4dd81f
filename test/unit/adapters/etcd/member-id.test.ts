import { describe, expect, it } from 'vitest';
import { decimalMemberId, hexMemberId } from '../../../../functions/adapters/etcd/member-id.ts';

describe('member ids', () => {
  it.each([
    ['16068973697794901265', 'df007670ea290511'],
    ['1', '1'],
    ['0', '0'],
    ['18446744073709551615', 'ffffffffffffffff'],
    ['255', 'ff'],
  ])('decimal %s is hex %s and back', (decimal, hex) => {
    expect(hexMemberId(decimal)).toBe(hex);
    expect(decimalMemberId(hex)).toBe(decimal);
  });

  it('prints hex in lowercase without leading zeros, as etcdctl does', () => {
    expect(hexMemberId('3735928559')).toBe('deadbeef');
    expect(decimalMemberId('00DEADBEEF')).toBe('3735928559');
  });

  it.each(['', '-1', '1.5', '0x10', '18446744073709551616'])('rejects decimal %j', (bad) => {
    expect(() => hexMemberId(bad)).toThrow(RangeError);
  });

  it.each(['', 'xyz', '10000000000000000'])('rejects hex %j', (bad) => {
    expect(() => decimalMemberId(bad)).toThrow(RangeError);
  });
});
