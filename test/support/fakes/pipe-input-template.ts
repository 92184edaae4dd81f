// A FAKE of EventBridge Pipes' input transformation for a target, as the EventBridge User Guide
// page "Amazon EventBridge Pipes input transformation" states it (sections "Implicit body data
// parsing" and "Common issues with transforming input"):
// - An SQS record's `body` that holds JSON is parsed, so `<$.body.key>` reaches into it.
// - A placeholder is `<$.path>` (dot notation, dashes, underscores, alphanumerics, array indices);
//   a reserved variable (`<aws.pipes...>`) is not modelled and is refused.
// - Inside a JSON template, a placeholder in quotes takes a string value, and one without quotes
//   takes an object, an array, a number or a boolean as JSON: the page says to quote variables
//   that reference strings and not those that reference objects or arrays.
// - A template made of one placeholder only, pointing at a JSON object, loses the object's inner
//   quotes: `{"key": "value"}` becomes `{key: value}`. The page warns that for targets that need
//   valid JSON, an event bus among them, this causes delivery failure.
// A path that names nothing is refused here: the page does not say what Pipes writes for it.

const PLACEHOLDER = /<(\$(?:\.[A-Za-z0-9_\-/]+|\[\d+\])+)>|<(aws\.[^>]*)>/g;
const ONLY_PLACEHOLDER = /^<(\$(?:\.[A-Za-z0-9_\-/]+|\[\d+\])+)>$/;

export class PipeTemplateError extends Error {}

/** The SQS record as Pipes hands it to the transformer: its body parsed when it is JSON. */
export function sqsPayload(record: { messageId: string; body: string }): Record<string, unknown> {
  let body: unknown = record.body;
  try {
    body = JSON.parse(record.body);
  } catch {
    // Not JSON: the body stays the string it is.
  }
  return { messageId: record.messageId, body };
}

function valueAt(payload: unknown, path: string): unknown {
  const steps = [...path.slice(1).matchAll(/\.([A-Za-z0-9_\-/]+)|\[(\d+)\]/g)].map((m) => m[1] ?? Number(m[2]));
  let value: unknown = payload;
  for (const step of steps) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<string | number, unknown>)[step];
  }
  return value;
}

/** `{"key": "value", "n": [1, "a"]}` as a lone placeholder renders it: every inner quote gone. */
const withoutQuotes = (value: unknown): string => JSON.stringify(value).replace(/"/g, '');

function resolved(payload: unknown, path: string): unknown {
  const value = valueAt(payload, path);
  if (value === undefined) throw new PipeTemplateError(`InputTemplate placeholder <${path}> names nothing in the event`);
  return value;
}

/** The target input a template gives for one event. */
export function renderInputTemplate(template: string, payload: unknown): string {
  const lone = ONLY_PLACEHOLDER.exec(template.trim());
  if (lone?.[1]) {
    const value = resolved(payload, lone[1]);
    if (typeof value === 'object' && value !== null) return withoutQuotes(value);
    return typeof value === 'string' ? value : JSON.stringify(value);
  }
  return template.replace(PLACEHOLDER, (whole, path: string | undefined, reserved: string | undefined, offset: number) => {
    if (reserved !== undefined || path === undefined)
      throw new PipeTemplateError(`InputTemplate reserved variable <${reserved ?? ''}> is not modelled by the pipe fake`);
    const value = resolved(payload, path);
    const quoted = template[offset - 1] === '"' && template[offset + whole.length] === '"';
    // In quotes: the string's characters, escaped as JSON needs them; otherwise the value as JSON.
    if (quoted) return JSON.stringify(typeof value === 'string' ? value : JSON.stringify(value)).slice(1, -1);
    return JSON.stringify(value);
  });
}
