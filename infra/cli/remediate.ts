// `remediate`: the whole pipeline on the embedded runtime, for one member, until it ends. Progress
// goes to stderr as it happens; the result goes to stdout.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { incidentIdOf, type DetailInputOf } from '../../events/catalogue.ts';
import { healthyTargetWarning, isMismatched, matchedMember, resolveTarget } from '../../functions/core/view/index.ts';
import { createLocalRuntime, type LocalRuntime } from '../runtime/runtime.ts';
import { createStaticDirectory } from '../../functions/adapters/local/static-directory.ts';
import { parseFlags, PROGRAM, UsageError } from './args.ts';
import { cliLogLevel } from './log-level.ts';
import type { AccessFlagValues } from './cluster-flags.ts';
import { openClusterProbe } from './cluster-probe.ts';
import { escapeControls } from './control-chars.ts';
import { EXIT, printResult } from './output.ts';
import { help as planHelp, planInputsFromFlags, planNow, planOptions } from './plan.ts';
import { showProgress } from './progress.ts';
import { snapshotDirFrom } from './snapshot-dir.ts';
import { chooseForResume, chooseForTarget, resumeCommand, type Chosen, type Selector } from './remediate-incident.ts';
import { resultOf } from './result.ts';
import { untilSignal } from './signals.ts';
import { incidentsIn, ownState } from './state.ts';
import { describeTargetFlag, hostSelector, type TargetFlag } from './target-flags.ts';
import { incidentRefFrom } from './incident-ref.ts';

const options = {
  ...planOptions,
  'dry-run': { type: 'boolean' },
  state: { type: 'string' },
  resume: { type: 'string' },
  'snapshot-dir': { type: 'string' },
} as const;

export const help = `usage: etcd-remediator remediate --endpoints URL[,URL…] --target NAME|ID [options]
       etcd-remediator remediate --kubeconfig F [--cluster NAME] --machine NAME|--node NAME|--target NAME|ID [options]
       etcd-remediator remediate --endpoints URL[,URL…]|--kubeconfig F --resume INCIDENT --state FILE [options]

Remediates one member end to end on the embedded runtime: probe, decide, move leadership off it
when it leads and answers (or, when it leads and is unreachable past the grace window with quorum
safe, go on without a move), remove it, and wait for a leader among the rest. Each step is printed
to stderr as it happens; the result goes to stdout. Exit 6 removed, awaiting its replacement (0 once
the replacement joined), 3 blocked, 4 failed, 5 closed with nothing removed. Through Kubernetes,
each decision is also a Kubernetes Event: on the target's Machine with --cluster, else on its Node
(the Event in namespace default; kubectl describe node lists it).

  --state FILE             SQLite state file (default: a new temporary file, printed on stderr).
                           A run cut short resumes its open incident when given the same file.
                           One process owns a state file at a time: another gets exit 2 at once.
                           remediate runs only what it is asked: with another incident open in
                           FILE it refuses (exit 2) and names the command that resumes it.
  --resume INCIDENT        resume exactly this open incident of FILE (an id or a unique prefix),
                           instead of --target, --machine or --node; other open incidents stay
                           as they are
  --snapshot-dir DIR       where the snapshot taken before each removal goes (default: snapshots/
                           beside the state file), as DIR/<cluster>/<incident>-<member>.db
  --dry-run                do not remediate: behave like \`etcd-remediator plan\`
${planHelp
  .split('\n')
  .slice(planHelp.split('\n').findIndex((l) => l.trim().startsWith('--target')))
  .join('\n')}`;

function defaultStatePath(): string {
  return path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'etcd-remediator-')), 'state.sqlite');
}

/**
 * The selector for MemberUnhealthy: an id only when the member list has a member with that id, so
 * a name such as "deadbeef" never silently becomes an id. With no list to ask, the reference
 * stays a name, and `note` says so when it could have been meant as an id.
 */
export function targetSelector(members: readonly { id: string; name: string }[], ref: string): { selector: Selector; note?: string } {
  const byName = members.find((m) => m.name === ref);
  const byId = members.find((m) => m.id === ref.toLowerCase());
  if (byName && byId && byName !== byId) {
    const other = byId.name ? `${byId.name} (${byId.id})` : byId.id;
    // Member names are the cluster's text: escaped, the error stays one line.
    throw new UsageError(
      escapeControls(
        `--target: ${ref} is the name of the member with id ${byName.id} and the id of ${other}; give ${byName.id}${byId.name ? ` or ${byId.name}` : ''} instead`,
      ),
    );
  }
  if (byName) return { selector: { memberName: ref } };
  if (byId) return { selector: { memberId: byId.id } };
  if (members.length === 0 && /^[0-9a-f]{1,16}$/i.test(ref)) {
    return {
      selector: { memberName: ref },
      note: `no endpoint answered a member list: --target ${ref} is taken as a member name; if it is a member id, run again once the cluster answers`,
    };
  }
  // Not in the member list (already removed?): let the pipeline say so, as it would for an event.
  return { selector: { memberName: ref } };
}

/** --machine and --node are the event's own selectors; --target is looked up in the member list. */
async function selectorFor(cluster: Parameters<typeof openClusterProbe>[0], target: TargetFlag): Promise<Selector> {
  const onHost = hostSelector(target);
  if (onHost) return onHost;
  const prober = openClusterProbe(cluster);
  try {
    const { view } = await prober.probe();
    const { selector, note } = targetSelector(view.members, target.value);
    // Seeds of two clusters give no member list, but they did answer: the pipeline says CLUSTER_MISMATCH.
    if (note && !isMismatched(view)) process.stderr.write(`${escapeControls(note)}\n`);
    // Before anything changes: a typo of a name remediates a healthy member (the one the selector names, as the pipeline resolves it).
    const named = matchedMember(resolveTarget(view, selector));
    const healthy = named && healthyTargetWarning(view, named.id);
    if (healthy) process.stderr.write(`${PROGRAM}: warning: ${escapeControls(healthy)}\n`);
    return selector;
  } finally {
    await prober.close();
  }
}

function checkResumeFlags(values: {
  resume?: string | undefined;
  target?: string | undefined;
  machine?: string | undefined;
  node?: string | undefined;
  state?: string | undefined;
  'dry-run'?: boolean | undefined;
}): void {
  if (values.resume === undefined) return;
  const flag = (['target', 'machine', 'node'] as const).find((f) => values[f] !== undefined);
  if (flag) throw new UsageError(`--resume and --${flag}: give one (--resume INCIDENT continues an incident of --state FILE; --${flag} remediates a member)`);
  if (values['dry-run']) throw new UsageError('--dry-run: cannot resume an incident; etcd-remediator plan --target NAME|ID shows what would happen now');
  if (values.state === undefined) throw new UsageError('--resume needs --state FILE, the state file that holds the incident');
  incidentRefFrom(values.resume, '--resume');
}

export async function run(argv: string[]): Promise<number> {
  const { values } = parseFlags('remediate', argv, options);
  if (values.help) {
    process.stdout.write(`${help}\n`);
    return EXIT.ok;
  }
  checkResumeFlags(values);
  // With --resume the target is the incident's own; the flag stands in for the check of --target.
  const { cluster, target } = await planInputsFromFlags(values.resume === undefined ? values : { ...values, target: values.resume });
  const json = values.json ?? false;
  if (values['dry-run']) return printResult(await planNow(cluster, target), json);

  const snapshotDir =
    values['snapshot-dir'] === undefined
      ? undefined
      : snapshotDirFrom(values['snapshot-dir'], process.cwd(), (problem) => new UsageError(`--snapshot-dir: ${problem}`));
  const statePath = values.state ?? defaultStatePath();
  // Owned before anything is read or probed: a second process is refused at once, not after a probe.
  const ownership = ownState(statePath);
  try {
    process.stderr.write(`state: ${statePath}${values.state ? '' : ' (temporary; pass --state FILE to keep a run resumable)'}\n`);
    const ctx = { statePath, clusterId: cluster.clusterId, access: accessFlagsOf(values) };
    const incidents = await incidentsIn(statePath);
    const chosen =
      values.resume === undefined
        ? chooseForTarget(incidents, await selectorFor(cluster, target), describeTargetFlag(target), ctx)
        : chooseForResume(incidents, values.resume, ctx);
    return await remediate(cluster, target, chosen, { statePath, json, access: ctx.access, ...(snapshotDir ? { snapshotDir } : {}) });
  } finally {
    ownership.release();
  }
}

/** The flags given that reach the cluster, for the command that resumes an incident of it. */
function accessFlagsOf(values: AccessFlagValues): string {
  const flags = ['cluster', 'endpoints', 'kubeconfig', 'workload-kubeconfig', 'namespace', 'paths'] as const;
  return flags.flatMap((flag) => (values[flag] === undefined ? [] : [`--${flag} ${values[flag]}`])).join(' ') || '--endpoints URL[,URL…]';
}

interface RunOptions {
  statePath: string;
  json: boolean;
  /** The flags that reach the cluster, for the command that resumes the incident. */
  access: string;
  snapshotDir?: string;
}

async function remediate(
  cluster: Parameters<typeof selectorFor>[0],
  target: TargetFlag,
  chosen: Chosen,
  { statePath, json, access, snapshotDir }: RunOptions,
): Promise<number> {
  const { incidentId, resumed: open } = chosen;
  const start = Date.now();
  let progress: ReturnType<typeof showProgress> | undefined;
  const runtime: LocalRuntime = await createLocalRuntime({
    statePath,
    ...(snapshotDir ? { snapshotDir } : {}),
    directory: createStaticDirectory([cluster]),
    logLevel: cliLogLevel(),
    onHandlerError: (fn, error) =>
      progress?.note(
        `${fn} failed: ${error instanceof Error ? error.message : String(error)} on every delivery; the incident resumes later, or blocks saying why`,
      ),
    // Only the incident chosen: another open one is never run on the side.
    resume: { incidentIds: open ? [incidentId] : [] },
  });
  // Through Kubernetes, each decision is also an Event on the target's Node (or Machine); the client is loaded only for that.
  const objectEvents = cluster.kube
    ? (await import('../kubernetes/incident-object-events.ts')).startIncidentObjectEvents({
        subscribe: runtime.bus.subscribe,
        store: runtime.store,
        clusters: [cluster],
        say: (line) => progress?.note(line),
      })
    : undefined;
  const signal = untilSignal();
  try {
    progress = showProgress(runtime.bus.subscribe, {
      start,
      filter: (e) => incidentIdOf(e) === incidentId || (incidentIdOf(e) === undefined && e.detail.clusterId === cluster.clusterId),
    });
    const outcome = runtime.waitForOutcome({ clusterId: cluster.clusterId, incidentId }, cluster.policy.incidentDeadlineMs + 60_000);
    if (open) progress.note(`resuming incident ${incidentId} (attempt ${open.attempt}, opened ${new Date(open.openedAt).toISOString()})`);
    if (chosen.others.length > 0) {
      const n = chosen.others.length;
      progress.note(
        `${n} other open incident${n === 1 ? '' : 's'} stay${n === 1 ? 's' : ''} as ${n === 1 ? 'it is' : 'they are'}: ${chosen.others.map((i) => i.incidentId).join(', ')}`,
      );
    }
    // The runtime re-arms the chosen open incident on start: that is the resume.
    await runtime.start();
    if (!open) {
      const now = new Date().toISOString();
      const detail: DetailInputOf<'MemberUnhealthy'> = {
        incidentId,
        clusterId: cluster.clusterId,
        attempt: 0,
        at: now,
        target: chosen.selector ?? { memberName: target.value },
        reason: `remediation requested with etcd-remediator remediate ${describeTargetFlag(target)}`,
        source: 'cli',
        observedAt: now,
      };
      await runtime.submit(detail, 'cli');
    }
    const ended = await Promise.race([outcome, signal.promise]);
    progress.stop();
    if (typeof ended === 'string') {
      const again = open ?? { incidentId, clusterId: cluster.clusterId };
      process.stderr.write(
        `${escapeControls(`interrupted (${ended}): incident ${incidentId} stays open in ${statePath}; resume it with ${resumeCommand(again, { statePath, clusterId: cluster.clusterId, access })}`)}\n`,
      );
      return 130;
    }
    return printResult(await resultOf(runtime.store, ended), json);
  } finally {
    progress?.stop();
    await objectEvents?.stop();
    await runtime.stop();
    signal.dispose();
  }
}
