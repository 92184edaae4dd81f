// The etcd user of a cluster with authentication enabled, taken as etcdctl takes it: a name, and
// its password from a file or ETCDCTL_PASSWORD, never from a flag value or a config field (shell
// history, `ps` and copied configs keep those). No message ever quotes the password.
import { inspect } from 'node:util';
import type { EtcdUser } from '../../functions/ports/etcd.ts';
import { InputFileError, readInputFile } from './input-file.ts';

export const PASSWORD_ENV = 'ETCDCTL_PASSWORD';

/** A password file holds one line; anything bigger is not one. */
const MAX_PASSWORD_FILE_BYTES = 4096;

/** How messages name the fields (`--user`, `clusters[0].auth.user`), and the error to throw. */
export interface UserWords {
  user: string;
  passwordFile: string;
  /** A password file's path as it is to be read (a config's are relative to the config). */
  resolve?: (file: string) => string;
  fail: (message: string) => Error;
}

/** Where to put the password instead, said by every refusal. */
const whereInstead = (words: UserWords): string => `put it in a file (${words.passwordFile} F, mode 600) or in ${PASSWORD_ENV}`;

/** Why a password given where it would be kept in the clear is refused, and what to do instead. */
export const passwordNotTaken = (words: UserWords): string =>
  `a password is not taken here (shell history, ps and copies of the file keep it); ${whereInstead(words)}`;

export const passwordRefused = (field: string, words: UserWords): string => `${field}: ${passwordNotTaken(words)}`;

/** Printed as `[etcd user NAME; password redacted]` by JSON.stringify and console.log alike. */
function redactedUser(username: string, password: string): EtcdUser {
  const user = { username, password };
  const shown = `[etcd user ${username}; password redacted]`;
  Object.defineProperty(user, 'toJSON', { value: () => shown, enumerable: false });
  Object.defineProperty(user, inspect.custom, { value: () => shown, enumerable: false });
  return user;
}

/** The password in a file: its one line, without the newline; a file others may read is refused. */
function readPasswordFile(file: string, words: UserWords): string {
  const named = `${words.passwordFile} ${file}`;
  let data: Buffer;
  try {
    const read = readInputFile(words.resolve ? words.resolve(file) : file, MAX_PASSWORD_FILE_BYTES);
    const mode = read.stat.mode & 0o777;
    if ((mode & 0o077) !== 0) throw words.fail(`${named}: is readable or writable by others (mode ${mode.toString(8)}); chmod 600 it`);
    data = read.data;
  } catch (error) {
    if (!(error instanceof InputFileError)) throw error;
    throw words.fail(`${named}: ${error.message}`);
  }
  const password = data.toString('utf8').replace(/\r?\n$/, '');
  if (password === '') throw words.fail(`${named}: is empty; it must hold the password of the etcd user`);
  if (/[\r\n]/.test(password)) throw words.fail(`${named}: holds more than one line; it must hold the password alone`);
  return password;
}

/** undefined when no user is given: calls go without authentication. */
export function etcdUserFrom(
  given: { user?: string | undefined; passwordFile?: string | undefined },
  words: UserWords,
  env: NodeJS.ProcessEnv = process.env,
): EtcdUser | undefined {
  const { user, passwordFile } = given;
  if (user === undefined) {
    if (passwordFile !== undefined) throw words.fail(`${words.passwordFile}: needs ${words.user} NAME, the etcd user whose password it holds`);
    return undefined;
  }
  // etcdctl takes "name:password"; the value is never echoed, since the part after the colon is a password.
  if (user.includes(':'))
    throw words.fail(`${words.user}: give the user name alone; a password after a colon is not taken (shell history and ps keep it); ${whereInstead(words)}`);
  if (user.trim() === '') throw words.fail(`${words.user}: must not be empty`);
  const password = passwordFile !== undefined ? readPasswordFile(passwordFile, words) : env[PASSWORD_ENV];
  if (password === undefined || password === '') {
    throw words.fail(`${words.user} ${user}: no password: give ${words.passwordFile} F (a file holding it, mode 600) or set ${PASSWORD_ENV}`);
  }
  return redactedUser(user, password);
}
