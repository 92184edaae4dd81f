// SIGINT/SIGTERM as a promise, so a long-running command can stop cleanly instead of dying.
export function untilSignal(signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM']): { promise: Promise<NodeJS.Signals>; dispose(): void } {
  let handler: (signal: NodeJS.Signals) => void = () => undefined;
  const promise = new Promise<NodeJS.Signals>((resolve) => {
    // Until dispose, later signals are absorbed too: a terminal signals every process in the group.
    handler = (signal) => resolve(signal);
  });
  for (const s of signals) process.on(s, handler);
  return {
    promise,
    dispose: () => {
      for (const s of signals) process.off(s, handler);
    },
  };
}
