// One cold start, run in a fresh Node process by cold-start.ts: import a bundle and, when given an
// event, make one handler call. Prints one marker line with the times, since the bundle's own
// Powertools logs share stdout.
import { pathToFileURL } from 'node:url';
import { MARKER, type ChildResult } from './protocol.ts';

type Handler = (event: unknown, context: unknown) => Promise<unknown>;

const context = (functionName: string) => ({
  functionName,
  functionVersion: '$LATEST',
  invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${functionName}`,
  memoryLimitInMB: '512',
  awsRequestId: 'coldstart-bench',
  logGroupName: `/aws/lambda/${functionName}`,
  logStreamName: 'bench',
  callbackWaitsForEmptyEventLoop: false,
  getRemainingTimeInMillis: () => 30_000,
});

async function main(bundle: string, eventJson: string | undefined, functionName: string): Promise<ChildResult> {
  const started = performance.now();
  const loaded = (await import(pathToFileURL(bundle).href)) as { handler?: Handler };
  const imported = performance.now();
  let outcome = 'imported';
  if (eventJson !== undefined) {
    if (!loaded.handler) throw new Error(`${bundle} exports no handler`);
    try {
      await loaded.handler(JSON.parse(eventJson), context(functionName));
      outcome = 'ok';
    } catch (error) {
      outcome = error instanceof Error ? `${error.name}: ${error.message.split('\n')[0]}` : String(error);
    }
  }
  return { importMs: imported - started, callMs: performance.now() - imported, outcome };
}

const [bundle, eventJson, functionName = 'bench'] = process.argv.slice(2);
if (!bundle) {
  process.stderr.write('usage: child.ts BUNDLE [EVENT_JSON [FUNCTION_NAME]]\n');
  process.exit(2);
}
const result = await main(bundle, eventJson === '' ? undefined : eventJson, functionName);
process.stdout.write(`\n${MARKER}${JSON.stringify(result)}\n`);
// An etcd client or a socket the failed call left open must not keep the process (and the bench) alive.
process.exit(0);
