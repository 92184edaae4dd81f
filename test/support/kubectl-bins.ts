// The real kubectl binaries the tests run against the fakes: Google's Cloud SDK ships one per
// minor as kubectl.1.<minor> beside its kubectl (and PATH's kubectl may live in such a folder).
// KUBECTL_BIN names one instead. Each is asked its own version.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export interface KubectlBin {
  bin: string;
  minor: number;
}

/** The client's minor version, as `kubectl version --client -o json` says; undefined when it does not run. */
export function kubectlMinorOf(bin: string): number | undefined {
  try {
    const version = JSON.parse(execFileSync(bin, ['version', '--client', '-o', 'json'], { encoding: 'utf8', timeout: 10_000 })) as {
      clientVersion?: { minor?: string };
    };
    const minor = Number.parseInt(version.clientVersion?.minor ?? '', 10);
    return Number.isNaN(minor) ? undefined : minor;
  } catch {
    return undefined;
  }
}

/** Every kubectl.1.<minor> of the Cloud SDK folder and of PATH's kubectl's folder, oldest first; KUBECTL_BIN alone when set. */
export function installedKubectls(): KubectlBin[] {
  const named = process.env.KUBECTL_BIN;
  if (named) {
    const minor = kubectlMinorOf(named);
    return minor === undefined ? [] : [{ bin: named, minor }];
  }
  const dirs = new Set(['/usr/lib/google-cloud-sdk/bin']);
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const onPath = path.join(dir, 'kubectl');
    if (fs.existsSync(onPath)) dirs.add(path.dirname(fs.realpathSync(onPath)));
  }
  const found = new Map<number, string>();
  for (const dir of dirs) {
    for (const name of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
      const minor = /^kubectl\.1\.(\d+)$/.exec(name)?.[1];
      if (minor !== undefined) found.set(Number(minor), path.join(dir, name));
    }
  }
  return [...found.entries()].sort(([a], [b]) => a - b).map(([minor, bin]) => ({ bin, minor }));
}

/** The newest installed kubectl, or an error that says how to get one. */
export function newestKubectl(): KubectlBin {
  const newest = installedKubectls().at(-1);
  if (!newest) throw new Error('no kubectl found: install the Cloud SDK kubectl (kubectl.1.27 … 1.33 in /usr/lib/google-cloud-sdk/bin) or set KUBECTL_BIN');
  return newest;
}
