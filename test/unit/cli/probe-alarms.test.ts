// `probe` on a cluster that reached its quota: every member raises NOSPACE. The alarm counts no
// member down (the quorum line says ok), so a line of its own says who raised it and what it does.
import { describe, expect, it } from 'vitest';
import { renderProbe } from '../../../infra/cli/probe.ts';
import { sample, view } from '../core/fixtures.ts';

describe('probe: the alarms the members raise', () => {
  it('NOSPACE on every member: the quorum holds, and the alarm is said, naming who raised it', () => {
    const members = [0, 1, 2].map((i) => ({ i, leader: 0, alarms: ['NOSPACE'] }));
    const shown = renderProbe({ sample: sample(1_000, members), view: view(1_000, members) });
    expect(shown).toMatch(/quorum: 3 of 3 voting members healthy, 2 needed: ok/);
    expect(shown).toMatch(/^alarm: NOSPACE raised by etcd-0, etcd-1, etcd-2: etcd refuses every write until space is freed and the alarm disarmed$/m);
  });

  it('a CORRUPT member counts against the quorum and is said too; no alarm, no line', () => {
    const corrupt = [
      { i: 0, leader: 0 },
      { i: 1, leader: 0 },
      { i: 2, leader: 0, alarms: ['CORRUPT'] },
    ];
    const shown = renderProbe({ sample: sample(1_000, corrupt), view: view(1_000, corrupt) });
    expect(shown).toMatch(/quorum: 2 of 3 voting members healthy/);
    expect(shown).toMatch(/^alarm: CORRUPT raised by etcd-2$/m);
    const calm = [0, 1, 2].map((i) => ({ i, leader: 0 }));
    expect(renderProbe({ sample: sample(1_000, calm), view: view(1_000, calm) })).not.toMatch(/alarm/);
  });
});
