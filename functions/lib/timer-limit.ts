// The longest a Node timer waits: 2^31 - 1 ms, about 24.8 days. Past it Node fires the timer at
// once (with a TimeoutOverflowWarning), so every timer of ours is armed for at most this long.
export const MAX_TIMER_MS = 2 ** 31 - 1;
