// etcd-remediator: the command-line edge. Each command lives in its own module, loaded on use.
import { failpointFrom, UnknownFailpointError } from '../runtime/failpoint.ts';
import { StateFileError } from '../../functions/adapters/local/state-file.ts';
import { PROGRAM, UsageError } from './args.ts';
import { escapeControls } from './control-chars.ts';
import { EXIT, flushOutput } from './output.ts';
import { watchParent } from './parent-watch.ts';
import packageJson from '../../package.json' with { type: 'json' };

interface CommandModule {
  help: string;
  run(argv: string[]): Promise<number>;
}

const commands: Record<string, { summary: string; load: () => Promise<CommandModule> }> = {
  probe: { summary: 'show every member, the leader as each sees it, and quorum', load: () => import('./probe.ts') },
  plan: { summary: 'dry run: what remediating a member would do now, and why', load: () => import('./plan.ts') },
  remediate: { summary: 'remediate a member end to end on the embedded runtime', load: () => import('./remediate.ts') },
  status: { summary: 'incidents as a table (--watch to follow), a timeline, dead letters', load: () => import('./status.ts') },
  report: { summary: 'one incident as a self-contained HTML page: timeline, member lanes, figures', load: () => import('./report.ts') },
  run: { summary: 'the long-running local service for the clusters in a config file', load: () => import('./run.ts') },
  lab: { summary: 'a real etcd lab with fault proxies, for trying all of the above', load: () => import('./lab.ts') },
  watch: { summary: 'Cluster API: serve MachineHealthCheck EtcdRemediationRequests', load: () => import('./watch.ts') },
  send: { summary: "put one MemberUnhealthy on a deployed stack's EventBridge bus", load: () => import('./send.ts') },
  register: { summary: "register a cluster in a deployed stack's cluster directory", load: () => import('./register.ts') },
  pause: { summary: 'hold every step that changes a cluster, fleet-wide or for one cluster', load: () => import('./pause.ts') },
  resume: { summary: 'lift a pause, or end a fleet storm now (--storm)', load: () => import('./resume.ts') },
};

/** What --version says: ours, and the Node.js that runs it (the etcd client and the gRPC stack ride on it). */
const version = `${PROGRAM} ${packageJson.version} (Node.js ${process.versions.node}, ${process.platform}-${process.arch})`;

const usage = `usage: ${PROGRAM} <command> [flags]   (${PROGRAM} <command> --help for its flags; ${PROGRAM} --version)

Leader-aware etcd member remediation: moves leadership off a sick member when its leader
answers, and removes an unreachable leader without a move once the followers confirm it.

commands:
${Object.entries(commands)
  .map(([name, c]) => `  ${name.padEnd(10)} ${c.summary}`)
  .join('\n')}

exit codes: 0 completed (removed and replaced) or planned, 1 error, 2 usage or invalid input (a flag,
a field, the state file: in use by another process, unreadable, or holding another open incident),
3 blocked, 4 failed, 5 closed with nothing removed, 6 removed and awaiting its replacement`;

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${usage}\n`);
    return name === undefined ? EXIT.usage : EXIT.ok;
  }
  if (name === '--version' || name === '-V' || name === 'version') {
    if (rest.length > 0) throw new UsageError(`${name} takes nothing after it, got ${JSON.stringify(rest[0])}`);
    process.stdout.write(`${version}\n`);
    return EXIT.ok;
  }
  // Checked before any command starts: a misspelt failpoint must not run without one.
  try {
    failpointFrom();
  } catch (error) {
    if (error instanceof UnknownFailpointError) throw new UsageError(error.message);
    throw error;
  }
  const command = commands[name];
  if (!command) throw new UsageError(`unknown command ${JSON.stringify(name)} (commands: ${Object.keys(commands).join(', ')})`);
  const module = await command.load();
  return module.run(rest);
}

watchParent();
let code: number;
try {
  code = await main(process.argv.slice(2));
} catch (error) {
  // A state file that cannot serve is the caller's to fix, as a bad flag is: one line, exit 2.
  const usageError = error instanceof UsageError || error instanceof StateFileError;
  const message = error instanceof Error ? error.message : String(error);
  // Messages quote flags, names and etcd's errors: each line escaped (a usage error may list one item a line).
  const lines = usageError ? message.split('\n') : message.split('\n').slice(0, 1);
  process.stderr.write(`${PROGRAM}: ${lines.map(escapeControls).join('\n')}\n`);
  if (!usageError && process.env.ETCD_REMEDIATOR_DEBUG && error instanceof Error) process.stderr.write(`${error.stack}\n`);
  code = usageError ? EXIT.usage : EXIT.error;
}
// Exit once the output is out, not before: writes to a full pipe complete asynchronously. Exit
// rather than end: the etcd client can keep a cancelled call's deadline timer alive for a whole
// call timeout after close.
await flushOutput();
process.exit(code);
