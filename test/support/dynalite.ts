// dynalite (a real DynamoDB-API server in Node) on a free loopback port, and fresh tables in it.
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
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

export async function startDynalite(): Promise<Dynalite> {
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
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
