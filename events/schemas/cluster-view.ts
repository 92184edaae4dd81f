// The cluster view as it travels in MembersProbed; mirrors functions/core/view.ts exactly.
import { z } from 'zod';
import type { ClusterView, LeaderView, MemberView, QuorumFigures } from '../../functions/core/view.ts';
import type { EtcdFailure, MemberStatus, PathProbe } from '../../functions/core/types.ts';
import { memberIdSchema, pathNameSchema } from './common.ts';

const count = z.number().int().nonnegative();
const millis = z.number().nonnegative();

const etcdFailureSchema = z.object({
  kind: z.enum(['refused', 'timeout', 'tls', 'auth', 'other']),
  grpcCode: z.number().int().optional(),
  message: z.string(),
});

const pathProbeSchema = z.object({
  path: pathNameSchema,
  endpoint: z.string(),
  reachability: z.enum(['ok', 'refused', 'timeout', 'tls', 'auth', 'other']),
  latencyMs: millis,
  failure: etcdFailureSchema.optional(),
});

const memberStatusSchema = z.object({
  leaderId: memberIdSchema,
  raftTerm: count,
  raftIndex: count,
  raftAppliedIndex: count,
  alarms: z.array(z.string()),
  errors: z.array(z.string()),
  version: z.string(),
  dbSize: count,
  isLearner: z.boolean(),
});

const memberViewSchema = z.object({
  id: memberIdSchema,
  name: z.string(),
  clientUrls: z.array(z.string()),
  peerUrls: z.array(z.string()),
  isLearner: z.boolean(),
  paths: z.array(pathProbeSchema),
  reachable: z.boolean(),
  started: z.boolean(),
  healthy: z.boolean(),
  status: memberStatusSchema.optional(),
  latencyMs: millis.optional(),
});

const leaderViewSchema = z.object({
  consensus: z.enum(['agreed', 'split', 'none']),
  id: memberIdSchema.optional(),
  name: z.string().optional(),
  term: count.optional(),
  reports: z.array(z.object({ memberId: memberIdSchema, leaderId: memberIdSchema, term: count })),
});

const quorumFiguresSchema = z.object({
  voting: count,
  healthyVoting: count,
  votingUp: count,
  size: count,
  ok: z.boolean(),
});

export const clusterViewSchema = z.object({
  at: z.number().int().nonnegative().describe('Epoch milliseconds of the probe.'),
  members: z.array(memberViewSchema),
  leader: leaderViewSchema,
  quorum: quorumFiguresSchema,
  listFailures: z.array(pathProbeSchema).describe('Why no seed gave a member list, when none did.'),
});

// Compile-time guard: the schema and the core types must not drift apart. `Equals` is strict
// identity, so a field added to one side only (even an optional one) fails the build.
type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Mutual<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

const _schemaMatchesCore: [
  Mutual<z.infer<typeof clusterViewSchema>, ClusterView>,
  Equals<z.infer<typeof etcdFailureSchema>, EtcdFailure>,
  Equals<z.infer<typeof pathProbeSchema>, PathProbe>,
  Equals<z.infer<typeof memberStatusSchema>, MemberStatus>,
  Equals<z.infer<typeof memberViewSchema>, MemberView>,
  Equals<z.infer<typeof leaderViewSchema>, LeaderView>,
  Equals<z.infer<typeof quorumFiguresSchema>, QuorumFigures>,
  Equals<z.infer<typeof clusterViewSchema>, ClusterView>,
] = [true, true, true, true, true, true, true, true];
