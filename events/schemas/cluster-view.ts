// The cluster view as it travels in MembersProbed; mirrors functions/core/view/view.ts exactly, and
// holds every text and list to the limits core's views are made within (view-limits.ts).
import { z } from 'zod';
import type { ClusterIdentity, ClusterView, LeaderView, MemberView, QuorumFigures } from '../../functions/core/view/index.ts';
import {
  type EtcdFailure,
  type HostEvidence,
  type MachineSummary,
  type IdentityReport,
  type MemberStatus,
  type PathProbe,
  jsonBytes,
  TEXT_LIMITS,
  VIEW_LIMITS,
} from '../../functions/core/common/index.ts';
import { endpointSchema, memberIdSchema, pathNameSchema } from './common.ts';

/** A text of at most `max` bytes as JSON; maxLength (UTF-16 units) says the same to JSON Schema, loosely. */
export const text = (max: number) =>
  z
    .string()
    .max(max)
    .refine((t) => jsonBytes(t) <= max, `must be at most ${max} bytes as JSON text`);
const endpointText = (max: number) => endpointSchema.max(max).refine((t) => jsonBytes(t) <= max, `must be at most ${max} bytes as JSON text`);
const endpoint = endpointText(TEXT_LIMITS.endpoint);
const url = endpointText(TEXT_LIMITS.url);
const texts = (count: number, max: number) => z.array(text(max)).max(count);

const count = z.number().int().nonnegative();
/** A day: a latency or a wait longer than that is a producer's bug (seconds or µs for ms), not data. */
export const MAX_MILLIS = 86_400_000;
const millis = z.number().nonnegative('must be ≥ 0').max(MAX_MILLIS, `must be at most ${MAX_MILLIS} ms (a day)`);

/** etcd's own cluster_id: uint64 as lowercase hex without leading zeros, as etcdctl prints it; never 0. */
const etcdClusterIdSchema = z
  .string()
  .regex(/^[1-9a-f][0-9a-f]{0,15}$/, 'must be an etcd cluster id: lowercase hex without leading zeros, e.g. 4f2a9e0b12cd3e45');

const identityReportSchema = z.object({ endpoint, clusterId: etcdClusterIdSchema });

const clusterIdentitySchema = z.object({
  id: etcdClusterIdSchema.optional().describe('The one cluster_id every answer carried; absent when none answered or they disagree.'),
  ids: z.array(etcdClusterIdSchema).max(VIEW_LIMITS.identityIds).describe('Every distinct cluster_id seen, sorted; more than one is CLUSTER_MISMATCH.'),
  reports: z.array(identityReportSchema).max(VIEW_LIMITS.identityReports).describe('Which endpoint answered with which cluster_id.'),
  listedBy: identityReportSchema.optional().describe("The seed whose member list the view's members are."),
});

const etcdFailureSchema = z.object({
  kind: z.enum(['refused', 'timeout', 'tls', 'auth', 'other']),
  grpcCode: z.number().int().optional(),
  message: text(TEXT_LIMITS.message),
});

const pathProbeSchema = z.object({
  path: pathNameSchema,
  endpoint,
  reachability: z.enum(['ok', 'refused', 'timeout', 'tls', 'auth', 'other']),
  latencyMs: millis,
  failure: etcdFailureSchema.optional(),
});

const memberStatusSchema = z.object({
  leaderId: memberIdSchema,
  raftTerm: count,
  raftIndex: count,
  raftAppliedIndex: count,
  alarms: texts(VIEW_LIMITS.alarms, TEXT_LIMITS.alarm),
  othersAlarms: z
    .array(z.object({ member: memberIdSchema, alarm: text(TEXT_LIMITS.alarm) }))
    .max(VIEW_LIMITS.alarms)
    .optional()
    .describe('The alarms this member reports for other members: a NOSPACE raised by a member that is down still refuses every write.'),
  errors: texts(VIEW_LIMITS.errors, TEXT_LIMITS.statusError),
  version: text(TEXT_LIMITS.version),
  dbSize: count,
  dbSizeInUse: count.optional().describe('Bytes of the database logically in use; dbSize less this is free pages a defragmentation returns.'),
  isLearner: z.boolean(),
  revision: count.optional().describe('The keyspace revision this member answered at.'),
  clusterId: etcdClusterIdSchema.optional().describe('The cluster_id this member answered with.'),
});

const hostEvidenceSchema = z.object({
  node: text(TEXT_LIMITS.name).optional().describe("The member's Node: from its etcd pod, or matched by name or InternalIP."),
  nodeExists: z.boolean().describe('False when the Node list answered without it.'),
  cordoned: z.boolean().optional().describe('Its Node is cordoned (spec.unschedulable): being drained, or about to be.'),
  pod: text(TEXT_LIMITS.pod).optional().describe('Its etcd pod, namespace/name.'),
  machine: z
    .object({
      name: text(TEXT_LIMITS.name),
      deleting: z.boolean(),
      outdated: z.boolean().optional().describe('Its UpToDate condition is False: the control plane rollout replaces it next.'),
    })
    .optional()
    .describe('Its Cluster API Machine, by status.nodeRef.'),
});

const machineSummarySchema = z.object({
  name: text(TEXT_LIMITS.name),
  nodeName: text(TEXT_LIMITS.name).optional(),
  deleting: z.boolean(),
  uid: text(TEXT_LIMITS.name).optional().describe('metadata.uid: only the Machine the incident saw is deleted, never a replacement by the same name.'),
});

const memberViewSchema = z.object({
  id: memberIdSchema,
  name: text(TEXT_LIMITS.name),
  clientUrls: z.array(url).max(VIEW_LIMITS.urls),
  peerUrls: z.array(url).max(VIEW_LIMITS.urls),
  isLearner: z.boolean(),
  paths: z.array(pathProbeSchema).max(VIEW_LIMITS.paths),
  reachable: z.boolean(),
  started: z.boolean(),
  healthy: z.boolean(),
  status: memberStatusSchema.optional(),
  latencyMs: millis.optional(),
  host: hostEvidenceSchema.optional().describe('Where the member runs, when kube access said.'),
});

const leaderViewSchema = z.object({
  consensus: z.enum(['agreed', 'split', 'none']),
  id: memberIdSchema.optional(),
  name: text(TEXT_LIMITS.name).optional(),
  term: count.optional(),
  reports: z.array(z.object({ memberId: memberIdSchema, leaderId: memberIdSchema, term: count })).max(VIEW_LIMITS.members),
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
  members: z.array(memberViewSchema).max(VIEW_LIMITS.members),
  leader: leaderViewSchema,
  quorum: quorumFiguresSchema,
  listFailures: z.array(pathProbeSchema).max(VIEW_LIMITS.listFailures).describe('Why no seed gave a member list, when none did.'),
  identity: clusterIdentitySchema.optional().describe('Which etcd cluster answered; absent in views kept before ids were recorded.'),
  pathLookFailure: text(TEXT_LIMITS.message).optional().describe('Why the kube paths were not resolved this time.'),
  machines: z
    .array(machineSummarySchema)
    .max(VIEW_LIMITS.machines)
    .optional()
    .describe("The cluster's control-plane Machines, when the management cluster was read."),
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
  Equals<z.infer<typeof identityReportSchema>, IdentityReport>,
  Equals<z.infer<typeof clusterIdentitySchema>, ClusterIdentity>,
  Equals<z.infer<typeof hostEvidenceSchema>, HostEvidence>,
  Equals<z.infer<typeof machineSummarySchema>, MachineSummary>,
] = [true, true, true, true, true, true, true, true, true, true, true, true];
