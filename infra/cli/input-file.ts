// The one way the CLI reads a file a user names (TLS files, kubeconfigs, the run config, a policy,
// a token): a regular file of bounded size, or a refusal saying why. Without it `--cacert
// /dev/zero` reads until memory runs out, and a FIFO with no writer blocks for ever.
import fs from 'node:fs';

/**
 * The most an input file may hold: 1 MiB. PEM bundles, kubeconfigs, configs and policies are a few
 * KiB; a full system CA bundle is about 200 KiB.
 */
export const MAX_INPUT_FILE_BYTES = 1 << 20;

/** A file refused or unreadable; `message` is the problem alone, for the caller to prefix with the flag or field. */
export class InputFileError extends Error {
  /** The OS's error code when the file could not be opened or read, e.g. ENOENT. */
  readonly code: string | undefined;
  constructor(message: string, code?: string) {
    super(message);
    this.name = 'InputFileError';
    this.code = code;
  }
}

export interface InputFile {
  data: Buffer;
  /** Of the descriptor read, so a check of the mode is a check of the file read. */
  stat: fs.Stats;
}

const kindOf = (stat: fs.Stats): string =>
  stat.isDirectory()
    ? 'a directory'
    : stat.isFIFO()
      ? 'a FIFO'
      : stat.isCharacterDevice()
        ? 'a character device'
        : stat.isBlockDevice()
          ? 'a block device'
          : stat.isSocket()
            ? 'a socket'
            : 'not a file';

const sizeText = (bytes: number): string => (bytes % (1 << 20) === 0 ? `${bytes / (1 << 20)} MiB` : `${bytes} bytes`);

const osError = (error: unknown): InputFileError => {
  const code = (error as NodeJS.ErrnoException).code;
  return new InputFileError(`cannot read: ${code ?? (error instanceof Error ? error.message : String(error))}`, code);
};

/**
 * Opens the file once and checks the open descriptor (the path may change between a check and an
 * open), then reads at most `maxBytes` + 1 bytes: one more than allowed proves it too large.
 */
export function readInputFile(file: string, maxBytes = MAX_INPUT_FILE_BYTES): InputFile {
  let fd: number;
  try {
    // Non-blocking, or opening a FIFO waits for a writer before anything can be checked.
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOCTTY);
  } catch (error) {
    throw osError(error);
  }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) throw new InputFileError(`not a regular file (${kindOf(stat)})`);
    if (stat.size > maxBytes) throw new InputFileError(`is ${stat.size} bytes, over the limit of ${sizeText(maxBytes)}`);
    const buffer = Buffer.alloc(maxBytes + 1);
    let length = 0;
    while (length < buffer.length) {
      const n = readSync(fd, buffer, length);
      if (n === 0) break;
      length += n;
    }
    // A file that grew after fstat.
    if (length > maxBytes) throw new InputFileError(`is over the limit of ${sizeText(maxBytes)}`);
    return { data: buffer.subarray(0, length), stat };
  } finally {
    fs.closeSync(fd);
  }
}

function readSync(fd: number, buffer: Buffer, offset: number): number {
  try {
    return fs.readSync(fd, buffer, offset, buffer.length - offset, null);
  } catch (error) {
    throw osError(error);
  }
}

/** The file as UTF-8 text. */
export const readInputText = (file: string, maxBytes = MAX_INPUT_FILE_BYTES): string => readInputFile(file, maxBytes).data.toString('utf8');
