// Durations on the command line and in config files: a number and one of ms, s, m, h. Strict, so
// "5x", "5" or "5 s" is an error rather than a guess.
const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 } as const;
const PATTERN = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/;

export const DURATION_HINT = 'use e.g. 500ms, 30s, 5m';

/** Milliseconds, or undefined when `text` is not a duration. */
export function parseDuration(text: string): number | undefined {
  const match = PATTERN.exec(text);
  if (!match) return undefined;
  const ms = Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  return Number.isFinite(ms) ? Math.round(ms) : undefined;
}

/** The error sentence for a value that is not a duration, without the flag's name. */
export const notADuration = (text: string): string => `${JSON.stringify(text)} is not a duration (${DURATION_HINT})`;

/** Short and exact enough for progress lines: "850ms", "3.2s", "2m5s". */
export function formatDuration(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${Number((ms / 1_000).toFixed(ms < 10_000 ? 2 : 1))}s`;
  // Rounded to whole seconds first, so 119.6 s is "2m0s", not "1m60s".
  const seconds = Math.round(ms / 1_000);
  return `${Math.floor(seconds / 60)}m${seconds % 60}s`;
}
