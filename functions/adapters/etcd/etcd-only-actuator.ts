// The actuator for a cluster whose machines nobody here replaces: the etcd member is removed, and
// the machine is left to whoever owns it (the message says so).
import type { Actuator } from '../../ports/actuator.ts';

/** Removes the etcd member only; the machine is left to whoever owns it. */
export const etcdOnlyActuator: Actuator = {
  name: 'etcd-only',
  replace: async ({ member }) => ({
    action: 'none',
    detail: `etcd-only actuator: machine of ${member.name || member.id} left as it is`,
  }),
};
