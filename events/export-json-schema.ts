// Writes events/json-schema/<DetailType>.json. With --check, writes nothing and fails on drift.
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { jsonSchemaDir, jsonSchemaFiles } from './json-schema.ts';

const check = process.argv.includes('--check');
const dir = fileURLToPath(jsonSchemaDir);
const wanted = jsonSchemaFiles();

await mkdir(dir, { recursive: true });
const present = (await readdir(dir)).filter((f) => f.endsWith('.json'));
const stale = present.filter((f) => !wanted.has(f));
const drifted: string[] = [];

for (const [file, contents] of wanted) {
  const current = await readFile(new URL(file, jsonSchemaDir), 'utf8').catch(() => undefined);
  if (current === contents) continue;
  drifted.push(file);
  if (!check) await writeFile(new URL(file, jsonSchemaDir), contents);
}

if (check) {
  const problems = [...drifted.map((f) => `${f} is out of date`), ...stale.map((f) => `${f} has no detail type`)];
  for (const p of problems) console.error(p);
  if (problems.length > 0) {
    console.error('run: npm run events:export');
    process.exitCode = 1;
  }
} else {
  for (const f of stale) console.warn(`${f} has no detail type; remove it`);
  console.log(`${wanted.size} schemas in ${dir}, ${drifted.length} updated`);
}
