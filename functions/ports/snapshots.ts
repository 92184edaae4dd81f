// Where a snapshot taken before a removal goes: a local directory, or object storage on AWS.
export interface SnapshotTarget {
  stream: NodeJS.WritableStream;
  /** Where a person finds it: a path or a URL. */
  location: string;
  /** Drops a snapshot that did not finish, so a half-written file is never taken for a backup. */
  discard(): Promise<void>;
}

export interface SnapshotStore {
  open(name: string): Promise<SnapshotTarget>;
}
