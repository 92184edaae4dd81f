import { describe, expect, it } from 'vitest';
import { formatDuration, notADuration, parseDuration } from '../../../infra/cli/duration.ts';

describe('durations', () => {
  it.each([
    ['500ms', 500],
    ['1.5s', 1_500],
    ['5m', 300_000],
    ['1h', 3_600_000],
    // Go's time.Duration, as Kubernetes users write it and as kubectl and Go programs print it.
    ['1h30m', 5_400_000],
    ['2m5s', 125_000],
    ['300ms', 300],
    ['1h0m0s', 3_600_000],
    ['90s', 90_000],
    ['1m30.5s', 90_500],
    ['2s500ms', 2_500],
    ['.5s', 500],
    ['0', 0],
    ['0s', 0],
  ])('parses %s', (text, ms) => expect(parseDuration(text)).toBe(ms));

  it.each(['5', '5x', '5 s', '', '-1s', '1h 30m', '30m1h', '1m1m', 's', '1.s', '5S', ' 5s', '1e3ms', '99999999999999999h'])('refuses %j', (text) =>
    expect(parseDuration(text)).toBeUndefined(),
  );

  it.each([
    ['5x', /"x" is not a unit/],
    ['5', /a unit is missing after "5"/],
    ['30m1h', /units must go from the largest to the smallest/],
    ['1m1m', /units must go from the largest to the smallest/],
    ['-1s', /must not be negative/],
    ['', /is empty/],
    ['99999999999999999h', /is too long/],
  ])('says what is wrong with %j', (text, problem) => {
    const message = notADuration(text);
    expect(message).toContain(`${JSON.stringify(text)} is not a duration`);
    expect(message).toMatch(problem);
    expect(message).toContain('use e.g.');
  });

  it.each([
    [850, '850ms'],
    [3_200, '3.2s'],
    [125_000, '2m5s'],
    [119_600, '2m0s'],
    [60_000, '1m0s'],
  ])('formats %d ms as %s', (ms, text) => expect(formatDuration(ms)).toBe(text));

  // The precision formatDuration prints at: whole ms, then 2 and 1 decimals of a second, then whole seconds.
  const precisionAt = (ms: number): number => (ms < 1_000 ? 1 : ms < 10_000 ? 10 : ms < 60_000 ? 100 : 1_000);

  it('parses back everything it prints, within the printed precision', () => {
    // A fixed-seed generator: the same values every run, spread over every range the formatter has.
    let seed = 0x2545f491;
    const random = () => (seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0) / 2 ** 32;
    const edges = [0, 0.4, 0.5, 999.4, 999.5, 1_000, 9_994, 9_995, 9_999, 10_000, 59_949, 59_950, 59_999, 60_000, 119_500, 3_600_000, 3_599_500, 86_400_000];
    const spread = Array.from({ length: 5_000 }, () => 10 ** (random() * 9) * random());
    for (const ms of [...edges, ...spread]) {
      const text = formatDuration(ms);
      const back = parseDuration(text);
      expect(back, `${ms} ms printed as ${text}`).toBeDefined();
      // Half a printed unit, plus half a millisecond for parseDuration's own rounding to whole ms.
      expect(Math.abs(back! - ms), `${ms} ms printed as ${text}, read back as ${back}`).toBeLessThanOrEqual(precisionAt(ms) / 2 + 0.5);
    }
  });
});
