// readInputFile: a regular file up to the bound is read whole; one byte more, or anything that is
// not a regular file, is refused without reading it whole (or, for a FIFO, without blocking).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InputFileError, MAX_INPUT_FILE_BYTES, readInputFile, readInputText } from '../../../infra/cli/input-file.ts';

describe('readInputFile', () => {
  let dir: string;
  const file = (name: string, bytes: number): string => {
    const at = path.join(dir, name);
    fs.writeFileSync(at, 'x'.repeat(bytes));
    return at;
  };
  const refusal = (read: () => unknown): InputFileError => {
    try {
      read();
    } catch (error) {
      if (error instanceof InputFileError) return error;
      throw error;
    }
    throw new Error('expected an InputFileError');
  };
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'input-file-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('reads a file of exactly the bound, and its stat', () => {
    const at = file('at-limit', 64);
    fs.chmodSync(at, 0o600);
    const read = readInputFile(at, 64);
    expect(read.data.length).toBe(64);
    expect(read.stat.mode & 0o777).toBe(0o600);
  });

  it('refuses a file one byte over the bound, naming its size and the bound', () => {
    expect(refusal(() => readInputFile(file('over', 65), 64)).message).toBe('is 65 bytes, over the limit of 64 bytes');
    expect(refusal(() => readInputFile(file('over-mib', MAX_INPUT_FILE_BYTES + 1))).message).toBe(
      `is ${MAX_INPUT_FILE_BYTES + 1} bytes, over the limit of 1 MiB`,
    );
  });

  it('refuses what is not a regular file, naming what it is, with no OS error code', () => {
    const fifo = path.join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    for (const [at, kind] of [
      [fifo, 'a FIFO'],
      [dir, 'a directory'],
      ['/dev/zero', 'a character device'],
      ['/dev/null', 'a character device'],
    ] as const) {
      const error = refusal(() => readInputFile(at));
      expect(error.message).toBe(`not a regular file (${kind})`);
      expect(error.code).toBeUndefined();
    }
  });

  it('says the OS error code of a file that cannot be opened', () => {
    const error = refusal(() => readInputText(path.join(dir, 'missing')));
    expect(error).toMatchObject({ message: 'cannot read: ENOENT', code: 'ENOENT' });
  });

  it('reads text through a symlink to a regular file', () => {
    const target = file('target', 5);
    const link = path.join(dir, 'link');
    fs.symlinkSync(target, link);
    expect(readInputText(link)).toBe('xxxxx');
  });
});
