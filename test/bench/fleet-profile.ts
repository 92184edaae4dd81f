// Reads a V8 CPU profile (`node --cpu-prof`) and says where the time went: the entries with the
// most self time (samples in the function itself, not in what it called), as function, file:line
// and share of all samples. (idle) and (program) are kept in the list, so the shares add up to
// what the process did, waiting included. Run alone: node test/bench/fleet-profile.ts FILE [--top N]
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples?: number[];
}

export interface SelfTime {
  functionName: string;
  /** file:line, the file relative to the working directory when it is ours. */
  where: string;
  samples: number;
  share: number;
}

const whereOf = ({ url, lineNumber }: ProfileNode['callFrame']): string => {
  if (!url) return '';
  const file = url.startsWith('file://') ? relative(process.cwd(), fileURLToPath(url)) : url;
  // V8 counts lines from 0.
  return `${file}:${lineNumber + 1}`;
};

/** Self time by function and place, most first. */
export function topSelfTime(profile: CpuProfile, top = 15): { total: number; entries: SelfTime[] } {
  const byNode = new Map(profile.nodes.map((n) => [n.id, n]));
  const hits = new Map<number, number>();
  if (profile.samples?.length) for (const id of profile.samples) hits.set(id, (hits.get(id) ?? 0) + 1);
  else for (const n of profile.nodes) hits.set(n.id, n.hitCount ?? 0);
  const byPlace = new Map<string, SelfTime>();
  let total = 0;
  for (const [id, count] of hits) {
    const frame = byNode.get(id)!.callFrame;
    const functionName = frame.functionName || '(anonymous)';
    const where = whereOf(frame);
    const key = `${functionName} ${where}`;
    const entry = byPlace.get(key) ?? { functionName, where, samples: 0, share: 0 };
    entry.samples += count;
    byPlace.set(key, entry);
    total += count;
  }
  const entries = [...byPlace.values()].sort((a, b) => b.samples - a.samples).slice(0, top);
  for (const e of entries) e.share = total ? e.samples / total : 0;
  return { total, entries };
}

export const profileLines = (profile: CpuProfile, top = 15): string[] => {
  const { total, entries } = topSelfTime(profile, top);
  return [
    `profile samples=${total} top=${entries.length} (self time)`,
    ...entries.map((e, i) => `profile #${i + 1} ${(e.share * 100).toFixed(1)}% ${e.functionName} ${e.where || '(native)'}`),
  ];
};

export const readProfile = (file: string): CpuProfile => JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;

if (import.meta.url === `file://${process.argv[1]}`) {
  const [file, flag, n] = process.argv.slice(2);
  if (!file) {
    console.error('usage: node test/bench/fleet-profile.ts FILE.cpuprofile [--top N]');
    process.exit(2);
  }
  for (const line of profileLines(readProfile(file), flag === '--top' ? Number(n) : 15)) console.log(line);
}
