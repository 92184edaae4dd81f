// Building blocks shared by every event detail.
import { z } from 'zod';
import {
  carriesCredentials,
  CREDENTIALS_IN_URL,
  reasonCodes,
  pathNameSchema,
  MAX_EVIDENCE_BYTES,
  MAX_MESSAGE_CHARS,
  jsonSize,
} from '../../functions/core/common/index.ts';
import { incidentIdSchema } from '../../functions/core/incident/index.ts';

/** Most ids and names fit here; longer strings are a producer bug, not data. */
const SHORT = 253;

export const isoTimestampSchema = z.iso.datetime({
  offset: true,
  // A schema-level message wins over the parse-level one, so "missing" is said here too.
  error: (issue) => (issue.input === undefined ? 'is required' : 'must be an ISO-8601 timestamp with a time zone, e.g. 2025-06-01T12:00:00Z'),
});

/** uint64 as lowercase hex without leading zeros, as etcdctl prints it; '0' means "no member". */
export const memberIdSchema = z
  .string()
  .regex(/^(?:0|[1-9a-f][0-9a-f]{0,15})$/, 'must be a member id: lowercase hex without leading zeros, e.g. 8e9e05c52164694d');

export const nonEmptyString = (max = SHORT) => z.string().trim().min(1, 'must not be empty').max(max);

export const attemptSchema = z.number().int('must be an integer').min(0, 'must be ≥ 0');

export { pathNameSchema };

/** An endpoint as events carry it (a client URL, `ns/pod:port`, `URL via ns/pod`): never with credentials in it. */
export const endpointSchema = z.string().refine((endpoint) => !carriesCredentials(endpoint), CREDENTIALS_IN_URL);

export const reasonCodeSchema = z.enum(reasonCodes, {
  // Some forty codes make zod's "expected one of" list unreadable in a log line.
  error: (issue) =>
    issue.input === undefined ? 'is required' : `${JSON.stringify(issue.input)} is not a known reason code (see functions/core/common/reason-table.ts)`,
});

/** JSON-safe facts behind a decision: which member, which path, what etcd said; bounded, as every step's commit keeps it. */
export const evidenceSchema = z
  .record(z.string(), z.unknown())
  .refine((evidence) => jsonSize(evidence) <= MAX_EVIDENCE_BYTES, `must be at most ${MAX_EVIDENCE_BYTES} bytes as JSON`);

export const messageSchema = nonEmptyString(MAX_MESSAGE_CHARS).describe('One plain sentence: which member, what failed, what happens next.');

/** Carried by every detail, so any event can be traced to its incident and attempt. */
export const envelopeShape = {
  incidentId: incidentIdSchema.describe('The incident this event belongs to: a lowercase UUID, as the remediator makes one.'),
  clusterId: nonEmptyString().describe('The etcd cluster, as named in the cluster directory.'),
  attempt: attemptSchema.describe('Which attempt of the incident this is, counting from 0.'),
  at: isoTimestampSchema.describe('When this event was produced.'),
};

/** A member once resolved: id and name (empty when the member never started). */
export const memberRefSchema = z.object({
  memberId: memberIdSchema,
  name: z.string().max(SHORT),
});

/** The ways a producer may name the sick member (core/view/target.ts); exactly one is given. */
export { selectorKeys, type SelectorKey } from '../../functions/core/view/index.ts';

export const selectorShape = {
  memberName: nonEmptyString().describe('etcd member name.'),
  memberId: z
    .string()
    .trim()
    .toLowerCase()
    .regex(/^(?:0|[1-9a-fA-F][0-9a-fA-F]{0,15})$/, 'must be a member id: hex without leading zeros, e.g. 8e9e05c52164694d')
    .describe('etcd member id in hex; normalized to lowercase.'),
  nodeName: nonEmptyString().describe('Kubernetes Node name.'),
  machineName: nonEmptyString().describe('Cluster API Machine name.'),
  instanceId: nonEmptyString(64).describe('Cloud instance id, e.g. an EC2 instance id.'),
};

/**
 * The target after probing: whatever selector the input used, plus the member it resolved to.
 * memberId/name are absent when the selector matched no member.
 */
export const resolvedTargetSchema = z
  .object({
    memberName: selectorShape.memberName.optional(),
    memberId: memberIdSchema.optional(),
    nodeName: selectorShape.nodeName.optional(),
    machineName: selectorShape.machineName.optional(),
    instanceId: selectorShape.instanceId.optional(),
    name: z.string().max(SHORT).optional().describe('Member name as etcd reports it, once resolved.'),
  })
  .refine((t) => Object.values(t).some((v) => v !== undefined), 'must name the member by at least one field')
  .meta({ minProperties: 1 });
