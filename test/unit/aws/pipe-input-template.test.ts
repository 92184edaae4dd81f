// The Pipe fake's input transformation, against the rules of the User Guide page "Amazon
// EventBridge Pipes input transformation".
import { describe, expect, it } from 'vitest';
import { renderInputTemplate, sqsPayload } from '../../support/fakes/pipe-input-template.ts';

const payload = sqsPayload({ messageId: 'm1', body: JSON.stringify({ detail: { id: 'a"b', n: 3, ok: true, list: [1, 'x'], inner: { key: 'value' } } }) });

describe('Pipes input transformation (fake)', () => {
  it('parses a JSON body, so $.body paths reach into it; a body that is not JSON stays a string', () => {
    expect(renderInputTemplate('<$.body.detail.n>', payload)).toBe('3');
    expect(renderInputTemplate('<$.body>', sqsPayload({ messageId: 'm2', body: 'hello' }))).toBe('hello');
  });

  it('a lone placeholder pointing at an object loses its inner quotes, as the page warns', () => {
    expect(renderInputTemplate('<$.body.detail.inner>', payload)).toBe('{key:value}');
  });

  it('in a JSON template, quoted placeholders take strings (escaped) and bare ones take JSON values', () => {
    const rendered = renderInputTemplate(
      '{"id": "<$.body.detail.id>", "n": <$.body.detail.n>, "ok": <$.body.detail.ok>, "list": <$.body.detail.list>, "inner": <$.body.detail.inner>}',
      payload,
    );
    expect(JSON.parse(rendered)).toEqual({ id: 'a"b', n: 3, ok: true, list: [1, 'x'], inner: { key: 'value' } });
  });

  it('refuses a path that names nothing, and the reserved variables it does not model', () => {
    expect(() => renderInputTemplate('{"x": "<$.body.missing>"}', payload)).toThrow('InputTemplate placeholder <$.body.missing> names nothing in the event');
    expect(() => renderInputTemplate('{"t": "<aws.pipes.event.ingestion-time>"}', payload)).toThrow(
      'reserved variable <aws.pipes.event.ingestion-time> is not modelled',
    );
  });
});
