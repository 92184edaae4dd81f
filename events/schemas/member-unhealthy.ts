// The normalized input: every outside source (CLI, MachineHealthCheck, EC2, HTTP) becomes this.
import { z } from 'zod';
import { attemptSchema, envelopeShape, isoTimestampSchema, nonEmptyString, selectorKeys, selectorShape } from './common.ts';

const selectorList = selectorKeys.join(', ');

/** Names the sick member in exactly one way; the probe resolves it to a member. */
export const memberSelectorSchema = z
  .strictObject({
    memberName: selectorShape.memberName.optional(),
    memberId: selectorShape.memberId.optional(),
    nodeName: selectorShape.nodeName.optional(),
    machineName: selectorShape.machineName.optional(),
    instanceId: selectorShape.instanceId.optional(),
  })
  .superRefine((target, ctx) => {
    const given = selectorKeys.filter((key) => target[key] !== undefined);
    if (given.length === 1) return;
    const problem =
      given.length === 0
        ? `names no member; give exactly one of ${selectorList}`
        : `names the member ${given.length} ways (${given.join(', ')}); give exactly one of ${selectorList}`;
    ctx.addIssue({ code: 'custom', message: problem });
  })
  // Strict object with optional fields: "exactly one" is exactly one property in JSON Schema.
  .meta({ minProperties: 1, maxProperties: 1, description: `Exactly one of ${selectorList}.` });

export const memberUnhealthySchema = z
  .object({
    ...envelopeShape,
    incidentId: envelopeShape.incidentId
      .optional()
      .describe('The incident to join. When absent the runtime assigns one, or joins the open incident for the same cluster and target.'),
    attempt: attemptSchema.default(0).describe('Which attempt this is; 0 for a fresh report.'),
    target: memberSelectorSchema,
    reason: nonEmptyString(1_000).describe('Why the source thinks the member is unhealthy, in its own words.'),
    source: nonEmptyString(64).describe("Who reported it, e.g. 'cli', 'mhc', 'ec2', 'http'. Open-ended."),
    observedAt: isoTimestampSchema.describe('When the source observed the problem.'),
  })
  .describe('A member was reported unhealthy; starts or joins an incident.');
