// Entry point of the detached lab daemon: node lab-daemon-main.ts STATE_FILE OPTIONS_JSON
import { runLabDaemon } from './lab-daemon.ts';
import type { LabOptions } from './lab-types.ts';

const [stateFile, optionsJson] = process.argv.slice(2);
if (!stateFile) {
  console.error('usage: lab-daemon-main.ts STATE_FILE [OPTIONS_JSON]');
  process.exit(2);
}
try {
  await runLabDaemon(stateFile, JSON.parse(optionsJson ?? '{"members":3}') as LabOptions);
  process.exit(0);
} catch (error) {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  process.exit(1);
}
