// One cold start, run in a fresh Node process by cold-start.ts: import a bundle and, when given an
// event, make one handler call; when given a chunk, import it after the call, as the invocation
// that first reaches a cluster would (what it shares with index.mjs is loaded already). Prints one
// marker line with the times, since the bundle's own Powertools logs share stdout.
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

async function main(bundle: string, eventJson: string | undefined, functionName: string, later: string | undefined): Promise<ChildResult> {
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
  const called = performance.now();
  if (later === undefined) return { importMs: imported - started, callMs: called - imported, outcome };
  await import(pathToFileURL(later).href);
  return { importMs: imported - started, callMs: called - imported, laterMs: performance.now() - called, outcome };
}

const [bundle, eventJson, functionName = 'bench', later] = process.argv.slice(2);
if (!bundle) {
  process.stderr.write('usage: child.ts BUNDLE [EVENT_JSON [FUNCTION_NAME [CHUNK]]]\n');
  process.exit(2);
}
const result = await main(bundle, eventJson === '' ? undefined : eventJson, functionName, later || undefined);
process.stdout.write(`\n${MARKER}${JSON.stringify(result)}\n`);
// An etcd client or a socket the failed call left open must not keep the process (and the bench) alive.
process.exit(0);
