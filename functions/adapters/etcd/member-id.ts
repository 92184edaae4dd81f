// etcd member ids are uint64: etcd3 hands them over as decimal strings, etcdctl prints them as hex.
import type { EtcdClusterId, MemberId } from '../../core/common/index.ts';

const UINT64_MAX = (1n << 64n) - 1n;

function checkedUint64(value: bigint, raw: string): bigint {
  if (value < 0n || value > UINT64_MAX) throw new RangeError(`member id out of uint64 range: ${raw}`);
  return value;
}

/** Decimal (as etcd3 returns it) to lowercase hex without leading zeros (as etcdctl prints it). */
export function hexMemberId(decimal: string | number): MemberId {
  const raw = String(decimal);
  if (!/^\d+$/.test(raw)) throw new RangeError(`not a decimal member id: ${raw}`);
  return checkedUint64(BigInt(raw), raw).toString(16);
}

/** etcd's cluster_id is a uint64 too, and etcdctl prints it as hex the same way. */
export const hexClusterId = (decimal: string): EtcdClusterId => hexMemberId(decimal);

/** Hex member id back to the decimal string etcd3 sends on the wire. */
export function decimalMemberId(hex: MemberId): string {
  const raw = hex.trim().toLowerCase().replace(/^0x/, '');
  if (!/^[0-9a-f]+$/.test(raw)) throw new RangeError(`not a hex member id: ${hex}`);
  return checkedUint64(BigInt(`0x${raw}`), hex).toString(10);
}
