// A deployed stack's table as the functions' own store reads and writes it, for pause, resume and
// status --table. Its own module, loaded on use: the AWS SDK costs a local command's start time.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { registeredClusterIdsIn } from '../../functions/adapters/aws/dynamodb-directory.ts';
import { createDynamoIncidentStore } from '../../functions/adapters/aws/dynamodb-store.ts';
import type { IncidentStore } from '../../functions/ports/incident-store.ts';

export function openDeployedTable(
  table: string,
  region: string | undefined,
): { records: IncidentStore; where: string; registeredClusterIds(): Promise<readonly string[]>; close(): Promise<void> } {
  // Without --region the SDK takes AWS_REGION, then the AWS config, as the aws CLI does.
  const client = new DynamoDBClient(region ? { region } : {});
  const records = createDynamoIncidentStore({ client, tableName: table });
  return { records, where: `table ${table}`, registeredClusterIds: () => registeredClusterIdsIn(client, table), close: async () => client.destroy() };
}
