// A CDK App for tests, its cloud assembly under the run's folder (shared-synth-setup.ts makes it and
// removes it at the end) instead of a cdk.outXXXX of its own in the system's temp folder, which
// nothing removed: about 55 MB a run. Outside such a run (a script), CDK's own temporary folder.
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { App, type AppProps } from 'aws-cdk-lib';
import { SHARED_SYNTH_DIR_VAR } from './shared-synth-setup.ts';

export function testApp(props: AppProps = {}): App {
  const root = process.env[SHARED_SYNTH_DIR_VAR];
  return new App({ ...(root && props.outdir === undefined ? { outdir: mkdtempSync(join(root, 'cdk.out-')) } : {}), ...props });
}
