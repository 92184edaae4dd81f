// The DynamoDB store through the shared contract, on dynalite (a real DynamoDB-API server) started
// here on a free loopback port, a fresh table per test.
import { afterAll, beforeAll } from 'vitest';
import { createDynamoIncidentStore } from '../../../functions/adapters/aws/dynamodb-store.ts';
import { startDynalite, type Dynalite } from '../../support/dynalite.ts';
import { describeIncidentStoreContract } from '../../support/store-contract.ts';

let dynamo: Dynalite;
beforeAll(async () => {
  dynamo = await startDynalite();
});
afterAll(async () => {
  await dynamo.close();
});

// "Another handle" is a store on a client of its own, as another Lambda container has.
describeIncidentStoreContract('dynamodb (dynalite)', async () => {
  const tableName = await dynamo.createTable();
  const open = () => createDynamoIncidentStore({ client: dynamo.client(), tableName });
  return { store: open(), another: async () => open(), close: async () => {} };
});
