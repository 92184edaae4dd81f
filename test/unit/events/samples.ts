// Reads the committed sample details, so tests start from realistic events.
import { readdirSync, readFileSync } from 'node:fs';
import type { DetailOf, DetailType } from '../../../events/catalogue.ts';

export const samplesDir = new URL('../../../events/samples/', import.meta.url);

export const sampleFiles = (): string[] => readdirSync(samplesDir).filter((f) => f.endsWith('.json'));

export const loadSample = <T extends DetailType>(detailType: T): DetailOf<T> =>
  JSON.parse(readFileSync(new URL(`${detailType}.json`, samplesDir), 'utf8')) as DetailOf<T>;
