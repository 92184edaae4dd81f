// Path resolvers: which endpoint reaches a member over which path.
import type { MemberInfo, PathName } from '../../core/common/index.ts';
import type { PathResolver } from '../../ports/etcd.ts';

/** Only the 'direct' path: the member's first advertised client URL. Kube-based paths need kube access. */
export const directPaths: PathResolver = {
  resolve(member: MemberInfo, path: PathName): string | undefined {
    return path === 'direct' ? member.clientUrls[0] : undefined;
  },
};
