import { describe, expect, it } from 'vitest';
import { hygieneRecordFromText, hygieneRecordText } from '../../../../functions/core/hygiene/hygiene-record-stored.ts';
import { nextRecordVersion } from '../../../../functions/core/common/index.ts';
import { emptyHygieneRecord } from '../../../../functions/core/hygiene/hygiene-record.ts';
import { realisticHygieneRecord } from '../../../support/hygiene-record-sample.ts';

describe('a hygiene record as stored text', () => {
  it('reads back exactly, the +Inf bucket bounds included, where plain JSON would make them null', () => {
    const record = realisticHygieneRecord();
    const text = hygieneRecordText(record);
    expect(hygieneRecordFromText(text, 'here')).toEqual(record);
    expect(hygieneRecordFromText(text, 'here').lastScrapes['8e9e05c52164694d']!.walFsync.buckets.at(-1)![0]).toBe(Infinity);
    expect((JSON.parse(JSON.stringify(record)) as typeof record).lastScrapes['8e9e05c52164694d']!.walFsync.buckets.at(-1)![0]).toBeNull();
  });

  it('keeps -Infinity and NaN too, and an empty record as empty', () => {
    const record = { ...emptyHygieneRecord(), samples: { a: [] } };
    const odd = { ...record, lastJudged: { at: -Infinity, kind: 'k', reason: 'r', message: 'm' } };
    expect(hygieneRecordFromText(hygieneRecordText(odd), 'here')).toEqual(odd);
    expect(hygieneRecordFromText(hygieneRecordText({ ...record, lastJudged: { ...odd.lastJudged, at: NaN } }), 'here').lastJudged?.at).toBeNaN();
    expect(hygieneRecordFromText(hygieneRecordText(record), 'here')).toEqual({ lastScrapes: {}, samples: { a: [] }, moves: [] });
  });

  it('refuses text that is not a record, naming where it came from and the field', () => {
    expect(() => hygieneRecordFromText('[]', 'row c1')).toThrow("row c1: the stored record's lastScrapes is not a map");
    expect(() => hygieneRecordFromText('"x"', 'row c1')).toThrow('row c1: the stored record is not an object');
    expect(() => hygieneRecordFromText('{"lastScrapes":{},"samples":{},"moves":{}}', 'row c1')).toThrow("row c1: the stored record's moves is not a list");
  });
});

describe('the version a save writes', () => {
  it('is one past the version read; a version read that is not a whole number ≥ 0 is named', () => {
    expect(nextRecordVersion(0)).toBe(1);
    expect(nextRecordVersion(41)).toBe(42);
    for (const bad of [-1, 0.5, NaN, Infinity]) expect(() => nextRecordVersion(bad)).toThrow(/^expectVersion must be a whole number ≥ 0/);
  });
});
