// Free loopback ports for labs. A lab that cuts a member closes that member's listener, and the
// port must not be handed to another lab meanwhile (its member would answer as another cluster).
// The kernel gives port-0 binds ports from its ephemeral range, newest freed among them, so labs
// running side by side (test workers, each lab's own processes) would soon reuse a cut port.
// Instead each process takes ports from a slice of its own below the ephemeral range, in turn
// from an offset of its own, and the kernel's port 0 only when the slice is used up.
import { readFileSync } from 'node:fs';
import net from 'node:net';

/** Below Linux's default ephemeral range (32768–60999), above the well-known and most service ports. */
const SLICES_FROM = 10_000;
const SLICE_SIZE = 500;
const SLICE_COUNT = 40;

function ephemeralLow(): number {
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    return low !== undefined && Number.isInteger(low) ? low : 32_768;
  } catch {
    return 32_768;
  }
}

/** Test runners number their parallel workers; otherwise the pid spreads processes apart. */
function sliceOf(): { first: number; size: number } | undefined {
  const worker = Number(process.env.VITEST_POOL_ID ?? process.env.JEST_WORKER_ID ?? Number.NaN);
  const index = (Number.isInteger(worker) ? worker : process.pid) % SLICE_COUNT;
  const first = SLICES_FROM + index * SLICE_SIZE;
  // A kernel whose ephemeral range starts low leaves no room: port 0 only.
  return first + SLICE_SIZE <= ephemeralLow() ? { first, size: SLICE_SIZE } : undefined;
}

const slice = sliceOf();
/** The next port of the slice to try: from an offset of this process's own (a lab daemon shares its parent's slice). */
let cursor = slice ? process.pid % slice.size : 0;

function listenOn(port: number, host: string): Promise<net.Server | undefined> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', (error: NodeJS.ErrnoException) =>
      port !== 0 && (error.code === 'EADDRINUSE' || error.code === 'EACCES') ? resolve(undefined) : reject(error),
    );
    server.listen({ port, host, exclusive: true }, () => {
      server.removeAllListeners('error');
      resolve(server);
    });
  });
}

/** The slice's next free port, held open; else any port the kernel gives. */
async function listenOnNextPort(host: string): Promise<net.Server> {
  for (let tries = 0; slice && tries < slice.size; tries++) {
    const port = slice.first + cursor;
    cursor = (cursor + 1) % slice.size;
    const server = await listenOn(port, host);
    if (server) return server;
  }
  const server = await listenOn(0, host);
  if (!server) throw new Error('no free port');
  return server;
}

function closeServer(server: net.Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/**
 * Returns `count` distinct free ports. All listeners are held open until every port is chosen,
 * so one call never hands out the same port twice.
 */
export async function freePorts(count: number, host = '127.0.0.1'): Promise<number[]> {
  const servers: net.Server[] = [];
  try {
    for (let i = 0; i < count; i++) servers.push(await listenOnNextPort(host));
    return servers.map((server) => (server.address() as net.AddressInfo).port);
  } finally {
    await Promise.all(servers.map(closeServer));
  }
}

export async function freePort(host = '127.0.0.1'): Promise<number> {
  const [port] = await freePorts(1, host);
  if (port === undefined) throw new Error('no free port');
  return port;
}
