// JSON Schema for every detail type, generated from the zod schemas so the two never disagree.
import { z } from 'zod';
import { detailSchemas, detailTypes, EVENT_SOURCE, type DetailType } from './catalogue.ts';

export const jsonSchemaDir = new URL('./json-schema/', import.meta.url);

/**
 * Describes what a producer must send (io: 'input'): fields with defaults are optional.
 * Refinements (e.g. "exactly one target") are carried as minProperties/maxProperties where JSON
 * Schema can say it.
 */
export function jsonSchemaFor(detailType: DetailType): Record<string, unknown> {
  const generated = z.toJSONSchema(detailSchemas[detailType], { io: 'input', target: 'draft-2020-12' });
  const { $schema, ...rest } = generated;
  return { $schema, $id: `${EVENT_SOURCE}/${detailType}.json`, title: detailType, ...rest };
}

/** File name → file contents, exactly as committed under events/json-schema/. */
export function jsonSchemaFiles(): Map<string, string> {
  return new Map(detailTypes.map((t) => [`${t}.json`, `${JSON.stringify(jsonSchemaFor(t), null, 2)}\n`]));
}
