// What a probe of a lab with some members blackholed must have found: every member listed, an answer
// from each healthy one, and each blackholed one asked and failed on every path. A probe that
// returned before it asked them all is fast and proves nothing, so it must not count toward a goal.
import type { MemberProbe, ProbeSample } from '../../functions/core/common/types.ts';

export interface ProbeExpectation {
  healthy: readonly string[];
  blackholed: readonly string[];
}

export interface ProbeCheck {
  complete: boolean;
  /** Counts, and what was missing: `listed=5/5 answered=3/3 failed=2/2`. */
  says: string;
}

export function checkProbe(sample: ProbeSample, expected: ProbeExpectation): ProbeCheck {
  const byName = new Map(sample.members.map((m) => [m.member.name, m]));
  const problems: string[] = [];
  const all = [...expected.healthy, ...expected.blackholed];
  const listed = all.filter((name) => byName.has(name)).length;
  for (const name of all) if (!byName.has(name)) problems.push(`${name} not listed`);

  const answered = expected.healthy.filter((name) => byName.get(name)?.status !== undefined).length;
  for (const name of expected.healthy) if (byName.has(name) && byName.get(name)!.status === undefined) problems.push(`no answer from ${name}`);

  const failed = expected.blackholed.filter((name) => failedEverywhere(byName.get(name))).length;
  for (const name of expected.blackholed) {
    const probe = byName.get(name);
    if (probe && probe.paths.length === 0) problems.push(`${name} not asked`);
    else if (probe && !failedEverywhere(probe)) problems.push(`${name} answered through its blackhole`);
  }

  const counts = `listed=${listed}/${all.length} answered=${answered}/${expected.healthy.length} failed=${failed}/${expected.blackholed.length}`;
  return { complete: problems.length === 0, says: problems.length === 0 ? counts : `${counts} (${problems.join('; ')})` };
}

/** Asked on at least one path, and no path answered. */
const failedEverywhere = (probe: MemberProbe | undefined): boolean =>
  probe !== undefined && probe.paths.length > 0 && probe.paths.every((p) => p.reachability !== 'ok') && probe.status === undefined;
