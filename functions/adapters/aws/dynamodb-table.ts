// The one DynamoDB table, as plain data: the store and the directory read and write it, the CDK
// construct maps it onto its Table, and tests create it from createTableInput. Change it here only.
import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';

export type KeyType = 'S' | 'N' | 'B';

export interface KeyAttribute {
  name: string;
  type: KeyType;
}

export interface GlobalSecondaryIndex {
  indexName: string;
  partitionKey: KeyAttribute;
  sortKey: KeyAttribute;
  projection: 'ALL';
}

export const table = {
  partitionKey: { name: 'pk', type: 'S' },
  sortKey: { name: 'sk', type: 'S' },
  /** Epoch seconds; DynamoDB deletes the item some time after it passes. */
  ttlAttribute: 'expiresAt',
  globalSecondaryIndexes: [
    /** Incidents by state (`incidents#<state>`), oldest first: every open incident, for the sweep. */
    { indexName: 'byState', partitionKey: { name: 'gsi1pk', type: 'S' }, sortKey: { name: 'gsi1sk', type: 'S' }, projection: 'ALL' },
    /** A cluster's incidents (`incidents-of#<clusterId>`), whatever their state, in the order last written. */
    { indexName: 'byCluster', partitionKey: { name: 'gsi2pk', type: 'S' }, sortKey: { name: 'gsi2sk', type: 'S' }, projection: 'ALL' },
  ],
} as const satisfies {
  partitionKey: KeyAttribute;
  sortKey: KeyAttribute;
  ttlAttribute: string;
  globalSecondaryIndexes: readonly GlobalSecondaryIndex[];
};

export type IndexName = (typeof table.globalSecondaryIndexes)[number]['indexName'];

/** The table as CreateTable wants it (on-demand billing), for tests and local tools. TTL is a separate call. */
export function createTableInput(tableName: string): CreateTableCommandInput {
  const keys = [table.partitionKey, table.sortKey, ...table.globalSecondaryIndexes.flatMap((i) => [i.partitionKey, i.sortKey])];
  const attributes = new Map(keys.map((k) => [k.name, k.type]));
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [...attributes].map(([AttributeName, AttributeType]) => ({ AttributeName, AttributeType })),
    KeySchema: [
      { AttributeName: table.partitionKey.name, KeyType: 'HASH' },
      { AttributeName: table.sortKey.name, KeyType: 'RANGE' },
    ],
    GlobalSecondaryIndexes: table.globalSecondaryIndexes.map((index) => ({
      IndexName: index.indexName,
      KeySchema: [
        { AttributeName: index.partitionKey.name, KeyType: 'HASH' },
        { AttributeName: index.sortKey.name, KeyType: 'RANGE' },
      ],
      Projection: { ProjectionType: index.projection },
    })),
  };
}
