// `lab`: a real etcd cluster with a fault proxy in front of every member, run by a detached daemon
// so separate invocations (up, fault, down) act on the same lab through its state file.
import fs from 'node:fs';
import path from 'node:path';
import { attachLab, spawnLabDaemon, type AttachedLab } from '../lab/lab-attach.ts';
import type { LabFault, LabMemberState, LabState } from '../lab/lab-types.ts';
import { integerFlag, parseFlags, UsageError } from './args.ts';
import { parseDuration } from './duration.ts';
import { EXIT, printJson, table } from './output.ts';

export const help = `usage: etcd-remediator lab <up|down|status|fault> [flags]

A lab of real etcd members on free loopback ports, each behind a TCP fault proxy. The cluster
advertises the proxies as its client URLs, so cutting one makes that member unreachable to
callers (as a dead kubelet does to a port-forward) while raft between members is untouched.
The lab runs in a background daemon; its state lives in a file so each command finds it.

  lab up [--members N] [--tls] [--state FILE]
                                          start N members (default 3) and return; prints endpoints
      --tls      serve clients as kubeadm runs etcd: https, and only to a client certificate of
                 the lab's own CA (--client-cert-auth); prints the CA, the client certificate and
                 key to give as --cacert, --cert and --key. Peers stay plain http on loopback
  lab status [--state FILE] [--json]      members, their faults and who leads
  lab fault MEMBER cut|blackhole|delay MS|heal|stop|cont|kill [--state FILE]
      cut        refuse new connections and drop open ones (a dead port-forward)
      blackhole  accept and never answer (timeouts)
      delay MS   add MS milliseconds each way
      heal       pass traffic again
      stop/cont  SIGSTOP / SIGCONT the etcd process; kill: SIGKILL (it stays in the member list)
  lab down [--state FILE]                 stop everything the lab started and remove its data

  --state FILE   the lab's state file (default: .lab/state.json under the current directory)`;

const DEFAULT_STATE = path.join('.lab', 'state.json');

function attach(stateFile: string): AttachedLab {
  if (!fs.existsSync(stateFile))
    throw new UsageError(`no lab at ${stateFile} (start one with etcd-remediator lab up${stateFile === DEFAULT_STATE ? '' : ` --state ${stateFile}`})`);
  return attachLab(stateFile);
}

const describeMode = (m: LabMemberState): string => (typeof m.mode === 'string' ? m.mode : `delay ${m.mode.delayMs}ms`);

function membersTable(members: LabMemberState[], leader?: string): string {
  return table(
    ['MEMBER', 'ID', 'CLIENT URL (PROXY)', 'PROXY', 'PROCESS', 'PID', 'LEADER'],
    members.map((m) => [m.name, m.id, m.clientUrl, describeMode(m), m.runState, String(m.pid), m.name === leader ? '*' : '']),
  );
}

async function leaderName(lab: AttachedLab): Promise<string | undefined> {
  try {
    return (await lab.leader()).name;
  } catch {
    return undefined;
  }
}

/** What a client needs beside the endpoints to talk to a TLS lab; nothing for a plain one. The CA's key is the lab's alone. */
const tlsLines = (state: LabState): string[] =>
  state.tls ? [`CA:          ${state.tls.caFile}`, `client cert: ${state.tls.certFile}`, `client key:  ${state.tls.keyFile}`] : [];

const tlsFlags = (state: LabState): string => (state.tls ? ` --cacert ${state.tls.caFile} --cert ${state.tls.certFile} --key ${state.tls.keyFile}` : '');

async function up(argv: string[]): Promise<number> {
  const { values } = parseFlags('lab up', argv, { members: { type: 'string' }, tls: { type: 'boolean' }, state: { type: 'string' } });
  if (values.help) return printHelp();
  const members = integerFlag('members', values.members, 1, 7) ?? 3;
  const stateFile = values.state ?? DEFAULT_STATE;
  fs.mkdirSync(path.dirname(path.resolve(stateFile)), { recursive: true });
  const lab = await spawnLabDaemon(stateFile, { members, ...(values.tls ? { tls: true } : {}) });
  const { state } = lab;
  const endpoints = lab.endpoints().join(',');
  const overTls = state.tls ? ' over TLS (clients need a certificate of the lab CA)' : '';
  process.stdout.write(
    [
      `lab up: ${members} etcd members${overTls}, election timeout ${state.electionTimeoutMs}ms, daemon pid ${state.ownerPid}, state ${stateFile}`,
      membersTable(state.members, await leaderName(lab)),
      `endpoints: ${endpoints}`,
      ...tlsLines(state),
      '',
      'try:',
      `  etcd-remediator probe --endpoints ${endpoints} --election-timeout ${state.electionTimeoutMs}ms${tlsFlags(state)}`,
      `  etcdctl --endpoints ${endpoints}${tlsFlags(state)} endpoint status -w table`,
      `  etcd-remediator lab fault ${state.members[0]?.name ?? 'etcd1'} cut${values.state ? ` --state ${stateFile}` : ''}`,
      `  etcd-remediator lab down${values.state ? ` --state ${stateFile}` : ''}`,
      '',
    ].join('\n'),
  );
  return EXIT.ok;
}

async function status(argv: string[]): Promise<number> {
  const { values } = parseFlags('lab status', argv, { state: { type: 'string' }, json: { type: 'boolean' } });
  if (values.help) return printHelp();
  const lab = attach(values.state ?? DEFAULT_STATE);
  const state = await lab.refresh();
  const leader = await leaderName(lab);
  if (values.json) printJson({ ...state, leader: leader ?? null, endpoints: lab.endpoints() });
  else process.stdout.write([membersTable(state.members, leader), `endpoints: ${lab.endpoints().join(',')}`, ...tlsLines(state), ''].join('\n'));
  return EXIT.ok;
}

const FAULTS = ['cut', 'blackhole', 'delay', 'heal', 'stop', 'cont', 'kill'] as const;

async function fault(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags('lab fault', argv, { state: { type: 'string' } }, true);
  if (values.help) return printHelp();
  const [name, mode, amount, ...extra] = positionals;
  if (!name || !mode) throw new UsageError(`lab fault needs MEMBER and one of ${FAULTS.join(', ')}, e.g. lab fault etcd1 cut`);
  if (!(FAULTS as readonly string[]).includes(mode)) throw new UsageError(`lab fault: ${JSON.stringify(mode)} is not a fault (use ${FAULTS.join(', ')})`);
  if (mode === 'delay' ? extra.length > 0 : amount !== undefined)
    throw new UsageError(`lab fault: unexpected argument ${JSON.stringify(mode === 'delay' ? extra[0] : amount)}`);
  const lab = attach(values.state ?? DEFAULT_STATE);
  lab.member(name);
  if (mode === 'stop' || mode === 'cont' || mode === 'kill') {
    await lab.signal(name, mode);
  } else {
    let faultMode: LabFault = mode as Exclude<LabFault, { delayMs: number }>;
    if (mode === 'delay') {
      const delayMs = amount === undefined ? undefined : /^\d+$/.test(amount) ? Number(amount) : parseDuration(amount);
      if (delayMs === undefined) throw new UsageError(`lab fault delay: ${JSON.stringify(amount ?? '')} is not a delay (use e.g. 200 or 200ms)`);
      faultMode = { delayMs };
    }
    await lab.fault(name, faultMode);
  }
  const member = lab.member(name);
  process.stdout.write(`${name}: proxy ${describeMode(member)}, process ${member.runState}\n`);
  return EXIT.ok;
}

async function down(argv: string[]): Promise<number> {
  const { values } = parseFlags('lab down', argv, { state: { type: 'string' } });
  if (values.help) return printHelp();
  const stateFile = values.state ?? DEFAULT_STATE;
  if (!fs.existsSync(stateFile)) {
    process.stdout.write(`no lab at ${stateFile}; nothing to do\n`);
    return EXIT.ok;
  }
  const lab = attachLab(stateFile);
  const pids = [...lab.state.members.map((m) => m.pid), lab.state.ownerPid];
  await lab.down();
  process.stdout.write(`lab down: stopped pids ${pids.join(', ')} and removed ${lab.state.root}\n`);
  return EXIT.ok;
}

function printHelp(): number {
  process.stdout.write(`${help}\n`);
  return EXIT.ok;
}

export async function run(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  switch (sub) {
    case 'up':
      return up(rest);
    case 'down':
      return down(rest);
    case 'status':
      return status(rest);
    case 'fault':
      return fault(rest);
    case undefined:
    case '--help':
    case '-h':
      return printHelp();
    default:
      throw new UsageError(`lab: unknown subcommand ${JSON.stringify(sub)} (use up, down, status or fault)`);
  }
}
