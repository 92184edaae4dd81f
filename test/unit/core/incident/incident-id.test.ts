// Incident ids have one shape, a lowercase UUID as randomUUID makes it: the ids the runtime mints
// are in it, and nothing that could name a path, a second line or another key passes for one.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  INCIDENT_ID_EXAMPLE,
  incidentIdSchema,
  isIncidentId,
  isIncidentIdPrefix,
  NOT_AN_INCIDENT_ID,
} from '../../../../functions/core/incident/incident-id.ts';
import { newIncidentId } from '../../../../infra/runtime/runtime.ts';

const ID = '3f2a1b0c-9d8e-4f70-a615-2b4c6d8e0f13';

describe('incident ids', () => {
  it('takes what randomUUID and the runtime mint, and the example the messages give', () => {
    for (const id of [randomUUID(), newIncidentId(), INCIDENT_ID_EXAMPLE, ID]) expect(isIncidentId(id), id).toBe(true);
  });

  it.each([
    ['a path', '../x'],
    ['a path of the right length', '../../../../../../../../../../../../x'],
    ['capitals', ID.toUpperCase()],
    ['braces', `{${ID}}`],
    ['no dashes', ID.replaceAll('-', '')],
    ['a newline after it', `${ID}\n`],
    ['a space before it', ` ${ID}`],
    ['a longer one', `${ID}0`],
    ['the old made-up kind', 'inc-1'],
    ['nothing', ''],
  ])('refuses %s', (_name, value) => {
    expect(isIncidentId(value)).toBe(false);
    expect(incidentIdSchema.safeParse(value).error?.issues[0]?.message).toBe(NOT_AN_INCIDENT_ID);
  });

  it('a prefix is any start of that shape, the whole id included', () => {
    for (const prefix of ['3', '3f2a', '3f2a1b0c', '3f2a1b0c-', '3f2a1b0c-9d', ID]) expect(isIncidentIdPrefix(prefix), prefix).toBe(true);
  });

  it.each([
    ['nothing', ''],
    ['a path', '../x'],
    ['a dash where a digit goes', '-3f2a'],
    ['a digit where a dash goes', '3f2a1b0c9'],
    ['capitals', '3F2A'],
    ['past the end', `${ID}0`],
    ['a slash', '3f2a/'],
  ])('a prefix refuses %s', (_name, value) => {
    expect(isIncidentIdPrefix(value)).toBe(false);
  });
});
