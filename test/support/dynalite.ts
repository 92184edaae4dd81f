// dynalite (a real DynamoDB-API server in Node) on a free loopback port, and fresh tables in it.
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import dynalite from 'dynalite';
import { createTableInput } from '../../functions/adapters/aws/dynamodb-table.ts';

export interface Dynalite {
  endpoint: string;
  /** A client of its own, as another Lambda container would have. */
  client(): DynamoDBClient;
  /** Creates the project's table under a fresh name and returns the name. */
  createTable(): Promise<string>;
  close(): Promise<void>;
}

/** One DynamoDB call as dynalite answered it, seen before the answer leaves. */
export interface DynamoExchange {
  /** The operation, e.g. "UpdateItem" (from X-Amz-Target). */
  operation: string;
  request: string;
  status: number;
  reply: string;
}

export interface DynaliteOptions {
  /**
   * Sees every answer before it is sent; the answer waits for a returned promise, so a test can
   * act between DynamoDB applying a write and the caller learning of it (say, kill the caller).
   */
  onReply?: (exchange: DynamoExchange) => void | Promise<void>;
}

/** Wraps the response's end so `onReply` sees each whole exchange before the caller does. */
function observe(onReply: NonNullable<DynaliteOptions['onReply']>) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const body: Buffer[] = [];
    req.on('data', (chunk: Buffer) => body.push(chunk));
    const end = res.end.bind(res) as (chunk?: unknown) => ServerResponse;
    res.end = ((chunk?: unknown) => {
      const exchange: DynamoExchange = {
        operation:
          String(req.headers['x-amz-target'] ?? '')
            .split('.')
            .at(-1) ?? '',
        request: Buffer.concat(body).toString('utf8'),
        status: res.statusCode,
        reply: typeof chunk === 'string' || Buffer.isBuffer(chunk) ? chunk.toString() : '',
      };
      void Promise.resolve()
        .then(() => onReply(exchange))
        // The caller gets its answer whatever the hook did; the hook's own test reports its failure.
        .catch(() => undefined)
        .then(() => end(chunk));
      return res;
    }) as ServerResponse['end'];
  };
}

export async function startDynalite(options: DynaliteOptions = {}): Promise<Dynalite> {
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  if (options.onReply) server.prependListener('request', observe(options.onReply));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const endpoint = `http://127.0.0.1:${port}`;
  const clients: DynamoDBClient[] = [];
  const client = (): DynamoDBClient => {
    const made = new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
    clients.push(made);
    return made;
  };
  const admin = client();
  return {
    endpoint,
    client,
    createTable: async () => {
      const name = `etcd-remediator-${randomUUID()}`;
      await admin.send(new CreateTableCommand(createTableInput(name)));
      return name;
    },
    close: async () => {
      for (const c of clients) c.destroy();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}
