// The one formatter of what zod refused: plain words for zod's defaults, a schema's own message
// kept, every issue named by its path; the policy check the flags and configs share.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { checkedPolicy, describeIssues, plainWords } from '../../../infra/cli/zod-issues.ts';

const said = (schema: z.ZodType, value: unknown): string => {
  const parsed = schema.safeParse(value, { error: plainWords });
  if (parsed.success) throw new Error('expected a refusal');
  return describeIssues(parsed.error.issues, '(value)');
};

describe('plainWords and describeIssues', () => {
  it.each([
    { schema: z.object({ n: z.number().int().positive() }), value: { n: 0 }, says: 'n: must be positive' },
    { schema: z.object({ n: z.number().int().nonnegative() }), value: { n: -1 }, says: 'n: must not be negative' },
    { schema: z.object({ n: z.number().int().min(100) }), value: { n: 5 }, says: 'n: must be at least 100' },
    { schema: z.object({ n: z.number().int() }), value: { n: 1.5 }, says: 'n: must be a whole number' },
    { schema: z.object({ n: z.number() }), value: { n: 'one' }, says: 'n: must be a number' },
    { schema: z.object({ s: z.string().min(1) }), value: { s: '' }, says: 's: must not be empty' },
    { schema: z.object({ a: z.array(z.string()).min(1) }), value: { a: [] }, says: 'a: must list at least one' },
    { schema: z.object({ e: z.enum(['direct', 'exec-relay']) }), value: { e: 'ssh' }, says: 'e: must be one of "direct", "exec-relay"' },
    { schema: z.object({ x: z.string() }), value: {}, says: 'x: is required' },
    {
      schema: z.object({ list: z.array(z.object({ id: z.string().min(1, 'its own words') })) }),
      value: { list: [{ id: '' }] },
      says: 'list[0].id: its own words',
    },
    { schema: z.strictObject({}), value: { extra: 1, more: 2 }, says: 'extra: is not a known field; more: is not a known field' },
    { schema: z.string(), value: 5, says: '(value): must be a string' },
  ])('$says', ({ schema, value, says }) => expect(said(schema, value)).toBe(says));
});

describe('checkedPolicy', () => {
  const fail = (message: string) => new Error(message);
  it('names every wrong policy field and why, in one message', () => {
    expect(() => checkedPolicy({ lockLeaseMs: 0, guardPrefix: '' }, fail)).toThrow(
      'policy.lockLeaseMs: must be positive; policy.guardPrefix: must be a key prefix such as /etcd-remediator',
    );
  });
  it('returns the policy, defaults applied, when it is right', () => {
    expect(checkedPolicy({ lockLeaseMs: 5_000 }, fail)).toMatchObject({ lockLeaseMs: 5_000, guardPrefix: '/etcd-remediator' });
  });
});
