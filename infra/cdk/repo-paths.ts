// Where the repository's files are, whatever directory synth or the tests run from.
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/** The Lambda entry of a function: `functions/<name>/lambda.ts`, exporting `handler`. */
export const lambdaEntry = (name: string): string => join(repoRoot, 'functions', name, 'lambda.ts');

export const lockFile = join(repoRoot, 'package-lock.json');
