// The other side of the lab daemon: start one detached, or attach to a running one through its
// state file, and drive it. Used by the `lab` CLI, where every command is a separate process.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gatewayMemberList } from './etcd-gateway.ts';
import { logTail } from './etcd-process.ts';
import { requestJson } from './http-json.ts';
import { readClientTls } from './lab-pki.ts';
import type { LabSignal } from './lab-daemon.ts';
import { isAlive, killOurs } from './pids.ts';
import type { LabFault, LabMemberInfo, LabMemberState, LabOptions, LabState } from './lab-types.ts';
import { WaitAborted, waitFor } from '../../functions/lib/wait-for.ts';

const DAEMON_MAIN = fileURLToPath(new URL('./lab-daemon-main.ts', import.meta.url));

export function readLabState(stateFile: string): LabState {
  const state = JSON.parse(fs.readFileSync(stateFile, 'utf8')) as LabState;
  if (state.version !== 1 || !Array.isArray(state.members)) throw new Error(`${stateFile} is not a lab state file`);
  return state;
}

interface ControlReply {
  state?: LabState;
  result?: { name?: string };
}

export class AttachedLab {
  readonly stateFile: string;
  private current: LabState;

  constructor(stateFile: string, state: LabState) {
    this.stateFile = stateFile;
    this.current = state;
  }

  /** As of the last command; refresh() asks the daemon. */
  get state(): LabState {
    return this.current;
  }

  member(name: string): LabMemberState {
    const member = this.current.members.find((m) => m.name === name);
    if (!member) throw new Error(`no lab member named ${name}; members: ${this.current.members.map((m) => m.name).join(', ')}`);
    return member;
  }

  endpoints(): string[] {
    return this.current.members.map((m) => m.clientUrl);
  }

  async refresh(): Promise<LabState> {
    await this.control('/state', {});
    return this.current;
  }

  async leader(): Promise<LabMemberState> {
    const reply = await this.control('/leader', {});
    return this.member(reply.result?.name ?? '');
  }

  async fault(name: string, fault: LabFault): Promise<void> {
    await this.control('/fault', { name, fault });
  }

  async signal(name: string, signal: LabSignal): Promise<void> {
    await this.control('/signal', { name, signal }, 15_000);
  }

  async addLearner(timeoutMs = 20_000): Promise<LabMemberState> {
    const reply = await this.control('/add-learner', { timeoutMs }, timeoutMs + 5_000);
    return this.member(reply.result?.name ?? '');
  }

  /** Ground truth through the members' real ports; needs no daemon. */
  async memberList(timeoutMs = 1_000): Promise<LabMemberInfo[]> {
    const problems: string[] = [];
    // A TLS lab answers only to its own client certificate, whose files the state names.
    const tls = this.current.tls ? readClientTls(this.current.tls) : undefined;
    for (const member of this.current.members.filter((m) => !m.isLearner)) {
      try {
        return await gatewayMemberList(member.directUrl, timeoutMs, tls);
      } catch (error) {
        problems.push(`${member.name}: ${(error as Error).message}`);
      }
    }
    throw new Error(`no member answered member list: ${problems.join('; ')}`);
  }

  /**
   * Asks the daemon to bring the lab down. If the daemon does not answer or does not exit, kills
   * what the state file names, by pid, and removes the lab's data and the state file.
   */
  async down(timeoutMs = 20_000): Promise<void> {
    const { ownerPid, root, members } = this.current;
    try {
      await this.control('/down', {}, timeoutMs);
      await waitFor(async () => (isAlive(ownerPid) ? undefined : true), { timeoutMs: 5_000, what: `lab daemon ${ownerPid} to exit` });
    } catch {
      // Only what the state file names and still runs as this lab: etcd carries the lab's token on
      // its command line, the daemon its state file. A reused pid belongs to someone else.
      killOurs(
        members.map((m) => m.pid),
        this.current.token,
      );
      killOurs([ownerPid], path.resolve(this.stateFile));
      fs.rmSync(root, { recursive: true, force: true });
    }
    fs.rmSync(this.stateFile, { force: true });
    fs.rmSync(`${this.stateFile}.log`, { force: true });
  }

  private async control(path: string, body: object, timeoutMs = 10_000): Promise<ControlReply> {
    const baseUrl = this.current.controlUrl;
    if (!baseUrl) throw new Error(`the lab in ${this.stateFile} has no control port: it does not run in a daemon`);
    let reply: ControlReply;
    try {
      reply = await requestJson<ControlReply>({ baseUrl, path, body, timeoutMs });
    } catch (error) {
      throw new Error(`lab daemon ${path}: ${(error as Error).message}`, { cause: error });
    }
    if (reply.state) this.current = reply.state;
    return reply;
  }
}

export function attachLab(stateFile: string): AttachedLab {
  return new AttachedLab(stateFile, readLabState(stateFile));
}

/**
 * Starts a detached lab daemon that writes `stateFile` once its lab is up, and attaches to it.
 * The daemon's own output goes to `<stateFile>.log`.
 */
export async function spawnLabDaemon(stateFile: string, options: LabOptions, timeoutMs = 60_000): Promise<AttachedLab> {
  if (fs.existsSync(stateFile)) {
    const existing = readLabState(stateFile);
    if (isAlive(existing.ownerPid)) throw new Error(`a lab is already running from ${stateFile} (daemon pid ${existing.ownerPid})`);
    fs.rmSync(stateFile, { force: true });
  }
  const logFile = `${stateFile}.log`;
  const logFd = fs.openSync(logFile, 'w');
  let child;
  try {
    child = spawn(
      process.execPath,
      ['--experimental-strip-types', '--disable-warning=ExperimentalWarning', DAEMON_MAIN, path.resolve(stateFile), JSON.stringify(options)],
      {
        detached: true,
        stdio: ['ignore', logFd, logFd],
      },
    );
  } finally {
    fs.closeSync(logFd);
  }
  let exit: string | undefined;
  child.on('error', (error) => (exit = error.message));
  child.on('exit', (code, signal) => (exit = `exited (code ${code}, signal ${signal})`));
  try {
    const state = await waitFor(
      async () => {
        if (exit) throw new WaitAborted(`lab daemon ${exit}; ${logFile} ends with:\n${logTail(logFile)}`);
        if (!fs.existsSync(stateFile)) return undefined;
        const state = readLabState(stateFile);
        return state.ownerPid === child.pid ? state : undefined;
      },
      { timeoutMs, intervalMs: 100, what: `lab daemon to write ${stateFile}` },
    );
    return new AttachedLab(stateFile, state);
  } catch (error) {
    if (child.pid !== undefined && !exit) process.kill(child.pid, 'SIGTERM');
    throw error;
  } finally {
    child.unref();
  }
}
