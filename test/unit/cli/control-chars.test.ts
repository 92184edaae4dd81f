// Control characters in text from outside are shown escaped: the rule itself, and the CLI's
// one-line renderers that quote member names and incident ids in errors.
import { describe, expect, it } from 'vitest';
import type { Incident } from '../../../functions/ports/incident-store.ts';
import { escapeControls, escapeControlsIn } from '../../../infra/cli/control-chars.ts';
import { chooseForTarget } from '../../../infra/cli/remediate-incident.ts';
import { targetSelector } from '../../../infra/cli/remediate.ts';

const ODD = 'a\nreason: FORGED\x1b[2J';
const SHOWN = 'a\\nreason: FORGED\\x1b[2J';

/** Any control character but the newline between lines. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/;

describe('escapeControls', () => {
  it.each([
    ['etcd-1', 'etcd-1'],
    [ODD, SHOWN],
    ['\r\t\0\x07\x1f', '\\r\\t\\x00\\x07\\x1f'],
    // DEL, C1 (CSI, NEL) and the bidi marks, embeddings, overrides and isolates; the line separators.
    ['\x7f\x85\x9b', '\\u007f\\u0085\\u009b'],
    ['\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e', '\\u061c\\u200e\\u200f\\u202a\\u202b\\u202c\\u202d\\u202e'],
    ['\u2066\u2067\u2068\u2069\u2028\u2029', '\\u2066\\u2067\\u2068\\u2069\\u2028\\u2029'],
    // Printable text of any script, and backslashes, stay as they are.
    ['café ⠋ 名前 \\n', 'café ⠋ 名前 \\n'],
  ])('%j is shown as %j', (raw, shown) => {
    expect(escapeControls(raw)).toBe(shown);
    expect(escapeControls(shown)).toBe(shown);
  });

  it('keeps a log line that ends in JSON valid JSON', () => {
    const line = escapeControls(`said ${JSON.stringify({ error: `x\u202e\x7f\x9b${ODD}` })}`);
    expect(RAW_CONTROL.test(line)).toBe(false);
    expect(JSON.parse(line.slice('said '.length))).toEqual({ error: `x\u202e\x7f\x9b${ODD}` });
  });
});

describe('escapeControlsIn', () => {
  it('escapes every string of a structure, keys too, and leaves the rest and the input as they are', () => {
    const at = new Date(0);
    const input = { name: ODD, n: 3, ok: true, none: null, list: [ODD, 1], nested: { [ODD]: { deeper: [{ x: '\x1b' }] } }, at };
    expect(escapeControlsIn(input)).toEqual({
      name: SHOWN,
      n: 3,
      ok: true,
      none: null,
      list: [SHOWN, 1],
      nested: { [SHOWN]: { deeper: [{ x: '\\x1b' }] } },
      at,
    });
    expect(escapeControlsIn(input).at).toBe(at);
    expect(input.name).toBe(ODD);
  });
});

const openIncident = (incidentId: string, memberName: string): Incident => ({
  incidentId,
  clusterId: 'prod',
  targetKey: `memberName=${memberName}`,
  target: { memberName },
  reason: 'kubelet down',
  state: 'open',
  openedAt: 0,
  updatedAt: 0,
  attempt: 1,
  waits: 0,
  immediateReprobes: 0,
  views: [],
  outbox: [],
  stepsDone: [],
  version: 1,
});

describe('errors that quote what a report or the cluster said', () => {
  it('remediate --target lists another open incident on one line of its own, escaped', () => {
    const other = openIncident(`id-${ODD}`, ODD);
    const refuse = () =>
      chooseForTarget([other], { memberName: 'etcd1' }, '--target etcd1', { statePath: 's.sqlite', clusterId: 'prod', access: '--endpoints http://e:2379' });
    expect(refuse).toThrow(`  id-${SHOWN}  prod  memberName=${SHOWN}  attempt 1  opened 1970-01-01T00:00:00.000Z`);
    expect(refuse).toThrow(`    resume it alone: etcd-remediator remediate --resume id-${SHOWN} --state s.sqlite --endpoints http://e:2379`);
    let message = '';
    try {
      refuse();
    } catch (error) {
      message = (error as Error).message;
    }
    expect(RAW_CONTROL.exec(message)?.[0]).toBeUndefined();
    expect(message.split('\n').filter((line) => line.startsWith('reason: FORGED'))).toEqual([]);
  });

  it('remediate --target naming one member and numbering another says so on one line', () => {
    const members = [
      { id: 'e7', name: 'abc123' },
      { id: 'abc123', name: ODD },
    ];
    expect(() => targetSelector(members, 'abc123')).toThrow(
      `--target: abc123 is the name of the member with id e7 and the id of ${SHOWN} (abc123); give e7 or ${SHOWN} instead`,
    );
  });
});
