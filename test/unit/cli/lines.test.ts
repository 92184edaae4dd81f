// run's stdin: lines split from bytes as they come, and a line over the limit known only by its size.
import { describe, expect, it } from 'vitest';
import { splitLines, type LineEvent } from '../../../infra/cli/lines.ts';

const split = (limit: number, chunks: (string | Buffer)[]): LineEvent[] => {
  const events: LineEvent[] = [];
  const lines = splitLines(limit, (e) => events.push(e));
  for (const chunk of chunks) lines.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  lines.end();
  return events;
};

describe('stdin lines', () => {
  it('splits lines across chunks, drops CR before LF, and keeps a last line without LF', () => {
    expect(split(100, ['a', 'b\nc\r', '\n\nd'])).toEqual([{ line: 'ab' }, { line: 'c' }, { line: '' }, { line: 'd' }]);
  });

  it('keeps a character split between chunks whole', () => {
    const bytes = Buffer.from('é\n');
    expect(split(100, [bytes.subarray(0, 1), bytes.subarray(1)])).toEqual([{ line: 'é' }]);
  });

  it('reports a line over the limit by its size, wherever the limit falls, and goes on with the next', () => {
    expect(split(4, ['abcd\nabcde\n', 'ok\n'])).toEqual([{ line: 'abcd' }, { tooLongBytes: 5 }, { line: 'ok' }]);
    expect(split(4, ['ab', 'cd', 'ef', 'g\nok'])).toEqual([{ tooLongBytes: 7 }, { line: 'ok' }]);
    expect(split(4, ['abcdefgh'])).toEqual([{ tooLongBytes: 8 }]);
  });
});
