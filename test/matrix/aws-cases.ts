// Case 21: faults in the AWS wiring (PutEvents partly failing, DynamoDB write conflicts, a function process killed mid-step).
import type { MatrixCase } from './harness.ts';

export const awsCases: MatrixCase[] = [];
