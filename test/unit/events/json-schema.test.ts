import { readdirSync, readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { detailTypes } from '../../../events/catalogue.ts';
import { jsonSchemaDir, jsonSchemaFiles } from '../../../events/json-schema.ts';
import { loadSample } from './samples.ts';

describe('committed JSON Schema', () => {
  const generated = jsonSchemaFiles();

  it('has one file per detail type and no strays', () => {
    const committed = readdirSync(jsonSchemaDir).filter((f) => f.endsWith('.json'));
    expect(committed.sort()).toEqual(detailTypes.map((t) => `${t}.json`).sort());
  });

  // On failure: npm run events:export
  it.each([...generated])('%s equals what events:export generates now', (file, contents) => {
    expect(readFileSync(new URL(file, jsonSchemaDir), 'utf8')).toBe(contents);
  });

  it('carries the exactly-one target rule where JSON Schema can say it', () => {
    const schema = JSON.parse(generated.get('MemberUnhealthy.json') ?? '{}') as {
      properties: { target: Record<string, unknown> };
      required: string[];
    };
    expect(schema.properties.target).toMatchObject({ minProperties: 1, maxProperties: 1, additionalProperties: false });
    // Producers may omit what the runtime fills in.
    expect(schema.required).not.toContain('incidentId');
    expect(schema.required).not.toContain('attempt');
    expect(schema.required).toEqual(expect.arrayContaining(['clusterId', 'target', 'reason', 'source', 'observedAt', 'at']));
  });

  it.each(['MembersProbed', 'LeaderMoved'] as const)('%s: a valid schema whose path names are direct, port-forward and exec-relay only', (detailType) => {
    const ajv = new Ajv2020({ allErrors: true, strict: true });
    addFormatsModule.default(ajv);
    const validate = ajv.compile(JSON.parse(generated.get(`${detailType}.json`) ?? '{}') as object);
    const sample = JSON.stringify(loadSample(detailType));
    const spelt = (name: string) => JSON.parse(sample.replaceAll(/"path":"(?:port-forward|exec-relay)"/g, `"path":"${name}"`)) as unknown;
    expect(sample).toMatch(/"path":"(?:port-forward|exec-relay)"/);
    expect(validate(spelt('exec-relay')), JSON.stringify(validate.errors)).toBe(true);
    for (const name of ['exec', 'ssh']) expect(validate(spelt(name))).toBe(false);
  });
});
