// The lab daemon: one long-running process that owns a lab's etcd members and fault proxies, so
// separate commands (`lab up`, `lab fault ...`, `lab down`) can share one lab. It keeps the state
// file current and takes commands as JSON on a loopback-only HTTP control port:
//   POST /state {}                       → { state }
//   POST /leader {}                      → { state, result: { name } }
//   POST /fault { name, fault }          → { state }     fault: 'cut'|'blackhole'|{delayMs}|'heal'
//   POST /signal { name, signal }        → { state }     signal: 'stop'|'cont'|'kill'
//   POST /add-learner { timeoutMs? }     → { state, result: { name } }
//   POST /down {}                        → { down: true }, then the daemon exits
// Errors answer 400 { error }; a malformed body names the field, e.g. "fault.delayMs: must be ≥ 0".
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { onProcessExit } from './cleanup.ts';
import { startLab, type Lab } from './lab.ts';
import type { LabOptions, LabState } from './lab-types.ts';

export type LabSignal = 'stop' | 'cont' | 'kill';

export function writeStateFile(stateFile: string, state: LabState): void {
  const temporary = `${stateFile}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, `${JSON.stringify(state, null, 2)}\n`);
  fs.renameSync(temporary, stateFile);
}

function readBody(req: http.IncomingMessage): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('error', reject);
    req.on('end', () => {
      try {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve(text === '' ? {} : (JSON.parse(text) as Record<string, unknown>));
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    });
  });
}

function requireName(body: Record<string, unknown>): string {
  if (typeof body.name !== 'string') throw new Error('body.name must be a member name');
  return body.name;
}

const FAULT_WORDS = ['cut', 'blackhole', 'heal', 'pass'] as const;

// Any client may reach the control port, so a fault is checked here, not trusted to the proxy.
const faultBodySchema = z.object({
  name: z.string({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be a member name') }).min(1, 'must be a member name'),
  fault: z.union([z.enum(FAULT_WORDS), z.strictObject({ delayMs: z.number().finite().min(0, 'must be ≥ 0') })], {
    error: (issue) =>
      issue.input === undefined ? 'is required' : `${JSON.stringify(issue.input)} is not a fault: use ${FAULT_WORDS.join(', ')} or { "delayMs": N }`,
  }),
});

/** The body of /fault, or an error naming the field and the problem, e.g. "fault.delayMs: must be ≥ 0". */
function parseFaultBody(body: unknown): z.infer<typeof faultBodySchema> {
  const parsed = faultBodySchema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw new Error(`${issue.path.map(String).join('.') || '(body)'}: ${issue.message}`);
}

async function handle(lab: Lab, path: string, body: Record<string, unknown>): Promise<unknown> {
  switch (path) {
    case '/state':
      return undefined;
    case '/leader':
      return { name: (await lab.leader()).name };
    case '/fault': {
      const { name, fault } = parseFaultBody(body);
      await lab.fault(name, fault);
      return undefined;
    }
    case '/signal': {
      const name = requireName(body);
      if (body.signal === 'stop') lab.stop(name);
      else if (body.signal === 'cont') lab.cont(name);
      else if (body.signal === 'kill') await lab.kill(name);
      else throw new Error(`unknown signal ${String(body.signal)}; use stop, cont or kill`);
      return undefined;
    }
    case '/add-learner': {
      const timeoutMs = typeof body.timeoutMs === 'number' ? body.timeoutMs : undefined;
      return { name: (await lab.addLearner(timeoutMs === undefined ? {} : { timeoutMs })).name };
    }
    default:
      throw new Error(`unknown control path ${path}`);
  }
}

/**
 * Starts a lab, serves its control port and writes `stateFile` once everything is up. Returns
 * when the lab has been brought down through the control port.
 */
export async function runLabDaemon(stateFile: string, options: LabOptions): Promise<void> {
  const lab = await startLab(options);
  onProcessExit(() => fs.rmSync(stateFile, { force: true }));
  let controlUrl = '';
  let finished: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (finished = resolve));

  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    const reply = (status: number, payload: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(payload));
    };
    void (async () => {
      try {
        const body = await readBody(req);
        if (path === '/down') {
          await lab.down();
          fs.rmSync(stateFile, { force: true });
          reply(200, { down: true });
          server.close(() => finished());
          server.closeAllConnections();
          return;
        }
        const result = await handle(lab, path, body);
        const state = lab.toState(controlUrl);
        writeStateFile(stateFile, state);
        reply(200, { state, ...(result === undefined ? {} : { result }) });
      } catch (error) {
        reply(400, { error: error instanceof Error ? error.message : String(error) });
      }
    })();
  });

  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ port: 0, host: '127.0.0.1' }, () => resolve());
    });
  } catch (error) {
    await lab.down();
    throw error;
  }
  controlUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  writeStateFile(stateFile, lab.toState(controlUrl));
  await done;
}
