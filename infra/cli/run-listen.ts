// Who may post to `run`: a bearer token compared in constant time, and a Unix socket only its
// owner can open. Neither the token nor any part of it is ever written out.
import crypto from 'node:crypto';
import fs from 'node:fs';
import type http from 'node:http';
import net from 'node:net';
import { UsageError } from './args.ts';

const digest = (text: string): Buffer => crypto.createHash('sha256').update(text, 'utf8').digest();

/**
 * Checks a request's `Authorization: Bearer …` against the token. Both sides are hashed first,
 * so the comparison is of equal lengths and takes the same time whatever was sent.
 */
export function bearerCheck(token: string): (req: http.IncomingMessage) => 'ok' | 'missing' | 'wrong' {
  const expected = digest(token);
  return (req) => {
    const header = req.headers.authorization;
    if (header === undefined) return 'missing';
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
    if (!match) return 'missing';
    return crypto.timingSafeEqual(digest(match[1]!), expected) ? 'ok' : 'wrong';
  };
}

/** Connects to a socket path to tell a live listener from a stale file a dead process left. */
function answers(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ path: socketPath });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Makes ready to listen on a Unix socket: the path must not exist, or be a stale socket of ours
 * (removed); anything else (a file, another user's socket, a live one) is refused. Nobody but us
 * and root may be able to remove or rename entries of the directory, or they could replace the
 * socket: it must be ours or root's, and closed to others or sticky (as /tmp, where only an
 * entry's owner, the directory's owner and root may remove or rename it).
 */
export async function prepareSocket(socketPath: string): Promise<void> {
  const uid = process.getuid?.();
  const where = `listen unix:${socketPath}`;
  const dir = fs.statSync(socketPath.replace(/\/[^/]*$/, '') || '/', { throwIfNoEntry: false });
  if (!dir?.isDirectory()) throw new UsageError(`${where}: its directory does not exist`);
  if (uid !== undefined && dir.uid !== uid && dir.uid !== 0) {
    throw new UsageError(
      `${where}: its directory is owned by uid ${dir.uid}, who could remove or replace the socket; use a directory of your own that only you can write (install -d -m 700 DIR)`,
    );
  }
  if ((dir.mode & 0o022) !== 0 && (dir.mode & 0o1000) === 0) {
    throw new UsageError(
      `${where}: its directory is writable by others (mode ${(dir.mode & 0o777).toString(8)}) and not sticky; use a directory only you can write (install -d -m 700 DIR)`,
    );
  }
  const existing = fs.lstatSync(socketPath, { throwIfNoEntry: false });
  if (!existing) return;
  if (!existing.isSocket()) throw new UsageError(`${where}: exists and is not a socket; remove it or choose another path`);
  if (uid !== undefined && existing.uid !== uid)
    throw new UsageError(`${where}: is a socket owned by uid ${existing.uid}, not by us (uid ${uid}); refusing to replace it`);
  if (await answers(socketPath)) throw new UsageError(`${where}: another process is listening on it`);
  fs.unlinkSync(socketPath);
}

/**
 * Listens on a Unix socket created owner-only: the umask is 0177 while the socket is bound (bind
 * happens inside listen(), synchronously), so it is never open to others, then chmod 600 as well.
 */
export function listenOnSocket(server: http.Server, socketPath: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    const previous = process.umask(0o177);
    try {
      server.listen({ path: socketPath, exclusive: true }, () => {
        try {
          fs.chmodSync(socketPath, 0o600);
          resolve();
        } catch (error) {
          reject(error instanceof Error ? error : new Error(String(error)));
        }
      });
    } finally {
      process.umask(previous);
    }
  });
}
