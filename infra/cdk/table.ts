// The one DynamoDB table, built from the definition the store adapter reads, so keys and indexes
// cannot drift between the code and the stack.
import type { RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, Table, TableEncryption, type Attribute } from 'aws-cdk-lib/aws-dynamodb';
import type { Construct } from 'constructs';
import { table as definition, type KeyAttribute } from '../../functions/adapters/aws/dynamodb-table.ts';

const attributeTypes = { S: AttributeType.STRING, N: AttributeType.NUMBER, B: AttributeType.BINARY } as const;

const attribute = (key: KeyAttribute): Attribute => ({ name: key.name, type: attributeTypes[key.type] });

/** The index names, for permissions scoped to exactly these indexes. */
export const indexNames: readonly string[] = definition.globalSecondaryIndexes.map((index) => index.indexName);

export function remediationTable(scope: Construct, id: string, removalPolicy: RemovalPolicy): Table {
  const table = new Table(scope, id, {
    partitionKey: attribute(definition.partitionKey),
    sortKey: attribute(definition.sortKey),
    billingMode: BillingMode.PAY_PER_REQUEST,
    timeToLiveAttribute: definition.ttlAttribute,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    encryption: TableEncryption.AWS_MANAGED,
    removalPolicy,
  });
  for (const index of definition.globalSecondaryIndexes) {
    table.addGlobalSecondaryIndex({
      indexName: index.indexName,
      partitionKey: attribute(index.partitionKey),
      sortKey: attribute(index.sortKey),
      projectionType: ProjectionType[index.projection],
    });
  }
  return table;
}
