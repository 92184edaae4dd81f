export declare const BUNDLE_ROOT: string;
export declare const MANIFEST: string;
export declare const LOCKFILE: string;

interface FileStat {
  mtimeMs: number;
  size: number;
}

/** What infra/build/cli-build.ts writes beside its builds. */
export interface Manifest {
  version: 1;
  /** Relative to BUNDLE_ROOT. */
  entry: string;
  lockfile: FileStat;
  inputs: (FileStat & { path: string })[];
}

export declare function freshBundle(root: string): string | undefined;
