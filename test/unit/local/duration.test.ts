import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from '../../../infra/local/cli/duration.ts';

describe('durations', () => {
  it.each([
    ['500ms', 500],
    ['1.5s', 1_500],
    ['5m', 300_000],
    ['1h', 3_600_000],
  ])('parses %s', (text, ms) => expect(parseDuration(text)).toBe(ms));

  it.each(['5', '5x', '5 s', '', '-1s'])('refuses %j', (text) => expect(parseDuration(text)).toBeUndefined());

  it.each([
    [850, '850ms'],
    [3_200, '3.2s'],
    [125_000, '2m5s'],
    [119_600, '2m0s'],
    [60_000, '1m0s'],
  ])('formats %d ms as %s', (ms, text) => expect(formatDuration(ms)).toBe(text));
});
