// Process-wide last-chance cleanup: a test process that crashes or is interrupted must not leave
// etcd running. Hooks are synchronous because 'exit' handlers cannot wait.
const hooks = new Set<() => void>();
let installed = false;

const SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

function runHooks(): void {
  for (const hook of [...hooks]) {
    hooks.delete(hook);
    try {
      hook();
    } catch {
      // best effort: the next hook must still run
    }
  }
}

function onSignal(signal: NodeJS.Signals): void {
  runHooks();
  // If nobody else handles the signal, die of it as the process would have without us.
  if (process.listenerCount(signal) === 1) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  }
}

function install(): void {
  if (installed) return;
  installed = true;
  process.on('exit', runHooks);
  for (const signal of SIGNALS) process.on(signal, onSignal);
}

/** Registers a synchronous cleanup; returns the function that unregisters it. */
export function onProcessExit(hook: () => void): () => void {
  install();
  hooks.add(hook);
  return () => {
    hooks.delete(hook);
  };
}
