// Snapshots before removal, as files in one directory beside the state file.
import fs from 'node:fs';
import path from 'node:path';
import type { SnapshotStore } from '../../ports/snapshots.ts';

export function fileSnapshots(directory: string): SnapshotStore {
  return {
    async open(name) {
      await fs.promises.mkdir(directory, { recursive: true });
      const location = path.join(directory, `${name.replace(/[^\w.-]/g, '_')}.db`);
      return {
        stream: fs.createWriteStream(location),
        location,
        discard: () => fs.promises.rm(location, { force: true }),
      };
    },
  };
}
