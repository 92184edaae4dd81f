// When leader hygiene says an alert: a run of judgements, one a check, and what each says of the
// hold it keeps. Once when a hold starts, once when it ends, nothing in between.
import { describe, expect, it } from 'vitest';
import { alertSayings, type AlertJudged } from '../../../../functions/core/hygiene/hygiene-alert.ts';
import type { ReasonCode } from '../../../../functions/core/common/decision.ts';
import type { HygieneAlertHeld } from '../../../../functions/core/hygiene/hygiene-record.ts';

const T0 = Date.parse('2026-12-04T12:00:00Z');
const CHECK_MS = 5_000;

/** A judgement as a check makes it; a figure in the sentence moves each check, as real figures do. */
const alertHold =
  (reason: ReasonCode, members?: string[]) =>
  (i: number): AlertJudged => ({
    kind: 'hold',
    alert: true,
    reason,
    message: `etcd-2's WAL fsync p99 was ${1000 + i * 7} ms, but …`,
    evidence: { latest: 1 + i / 100 },
    ...(members ? { members } : {}),
  });
const judged = (kind: string, reason: ReasonCode) => (): AlertJudged => ({ kind, reason, message: `${reason} said`, evidence: {} });

const NO_TARGET = alertHold('HYGIENE_NO_TARGET', ['etcd-1', 'etcd-3']);
const SHARED = alertHold('HYGIENE_SHARED_DEGRADATION');
const HEALTHY = judged('leave', 'HYGIENE_LEADER_HEALTHY');

/** Runs the judgements a check apart from T0, carrying the hold as the record does; each check's sayings as "phase reason". */
function run(judgements: readonly ((i: number) => AlertJudged)[], held?: HygieneAlertHeld): { said: string[][]; held: HygieneAlertHeld | undefined } {
  const said: string[][] = [];
  judgements.forEach((judge, i) => {
    const result = alertSayings(held, judge(i), T0 + i * CHECK_MS);
    said.push(result.say.map((s) => `${s.phase} ${s.reason}`));
    held = result.held;
  });
  return { said, held };
}

const times = <T>(n: number, value: T): T[] => Array.from({ length: n }, () => value);

describe('alertSayings', () => {
  it.each([
    {
      row: 'a hold over 60 s of checks, its figures moving: said once, then once more when the leader is well',
      judgements: [...times(13, NO_TARGET), HEALTHY],
      said: [['started HYGIENE_NO_TARGET'], ...times(12, []), ['ended HYGIENE_NO_TARGET']],
    },
    {
      row: 'a shared degradation over 60 s, ended by a move judged (a target found)',
      judgements: [...times(13, SHARED), judged('move', 'LEADER_DEGRADED')],
      said: [['started HYGIENE_SHARED_DEGRADATION'], ...times(12, []), ['ended HYGIENE_SHARED_DEGRADATION']],
    },
    {
      row: 'checks that tell nothing of the hold keep it: not judged, degrading, a cooldown, a move pending',
      judgements: [
        NO_TARGET,
        judged('not-evaluated', 'HYGIENE_SCRAPE_FAILED'),
        judged('not-evaluated', 'HYGIENE_UNSTABLE'),
        judged('leave', 'HYGIENE_DEGRADING'),
        judged('hold', 'HYGIENE_COOLDOWN'),
        judged('hold', 'HYGIENE_MOVE_PENDING'),
        NO_TARGET,
      ],
      said: [['started HYGIENE_NO_TARGET'], [], [], [], [], [], []],
    },
    {
      row: 'another hold: the first ends and the second starts, in that order',
      judgements: [NO_TARGET, SHARED, SHARED],
      said: [['started HYGIENE_NO_TARGET'], ['ended HYGIENE_NO_TARGET', 'started HYGIENE_SHARED_DEGRADATION'], []],
    },
    {
      row: 'no target with other followers refused: a new hold',
      judgements: [NO_TARGET, alertHold('HYGIENE_NO_TARGET', ['etcd-1', 'etcd-4']), alertHold('HYGIENE_NO_TARGET', ['etcd-4', 'etcd-1'])],
      said: [['started HYGIENE_NO_TARGET'], ['ended HYGIENE_NO_TARGET', 'started HYGIENE_NO_TARGET'], []],
    },
    {
      row: 'recovered ends it; the same hold again later is a new one',
      judgements: [NO_TARGET, judged('leave', 'HYGIENE_RECOVERED'), HEALTHY, NO_TARGET],
      said: [['started HYGIENE_NO_TARGET'], ['ended HYGIENE_NO_TARGET'], [], ['started HYGIENE_NO_TARGET']],
    },
    {
      row: 'a move held back by a pause or an incident still ends a no-target hold: a target was found',
      judgements: [NO_TARGET, judged('hold', 'HYGIENE_PAUSED'), NO_TARGET, judged('hold', 'HYGIENE_INCIDENT_OPEN')],
      said: [['started HYGIENE_NO_TARGET'], ['ended HYGIENE_NO_TARGET'], ['started HYGIENE_NO_TARGET'], ['ended HYGIENE_NO_TARGET']],
    },
    { row: 'no hold held: a healthy leader says nothing', judgements: [HEALTHY, judged('move', 'LEADER_DEGRADED')], said: [[], []] },
  ])('$row', ({ judgements, said }) => {
    expect(run(judgements).said).toEqual(said);
  });

  it('keeps when the hold started, not when last checked, and forgets it once ended', () => {
    const { held } = run(times(13, NO_TARGET));
    expect(held).toEqual({ at: T0, reason: 'HYGIENE_NO_TARGET', members: ['etcd-1', 'etcd-3'] });
    expect(run([...times(3, NO_TARGET), HEALTHY]).held).toBeUndefined();
  });

  it('says the start with the judgement, and the end with when it started, what ended it and the sentence of now', () => {
    const start = alertSayings(undefined, NO_TARGET(0), T0);
    expect(start.say).toEqual([{ phase: 'started', reason: 'HYGIENE_NO_TARGET', message: NO_TARGET(0).message, evidence: NO_TARGET(0).evidence }]);
    const end = alertSayings(
      start.held,
      { kind: 'leave', reason: 'HYGIENE_LEADER_HEALTHY', message: 'etcd-2 leads and breaches no degradation rule.', evidence: {} },
      T0 + 65_000,
    );
    expect(end.say).toEqual([
      {
        phase: 'ended',
        reason: 'HYGIENE_NO_TARGET',
        message: 'The HYGIENE_NO_TARGET hold said at 2026-12-04T12:00:00.000Z is over after 65 s: etcd-2 leads and breaches no degradation rule.',
        evidence: { startedAt: '2026-12-04T12:00:00.000Z', endedBy: 'HYGIENE_LEADER_HEALTHY', members: ['etcd-1', 'etcd-3'] },
      },
    ]);
  });
});
