// Where a snapshot taken before a removal goes: a local directory, or object storage on AWS.

/** What a snapshot is of, for its name and its metadata. */
export interface SnapshotSubject {
  clusterId: string;
  incidentId: string;
  /** The member about to be removed. */
  member: string;
}

export interface SnapshotTarget {
  /** Takes the bytes as etcd streams them; ended by the writer once the stream is whole. */
  stream: NodeJS.WritableStream;
  /** Where a person finds it: a path or a URL. */
  location: string;
  /**
   * Makes the written snapshot the kept one (a file renamed into place, an upload completed),
   * once its bytes were checked; `sha256` is the hex digest of every byte written.
   */
  keep(sha256: string): Promise<void>;
  /** Drops a snapshot that did not finish, so a half-written one is never taken for a backup. */
  discard(): Promise<void>;
}

export interface SnapshotStore {
  /** The store, as a message names it: "directory /var/lib/x/snapshots", "bucket b". */
  describe: string;
  open(subject: SnapshotSubject): Promise<SnapshotTarget>;
}
