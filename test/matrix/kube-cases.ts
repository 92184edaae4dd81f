// Case 20: faults on the Kubernetes paths (kubelet down, containerd down, Node deleted, the workload API server unreachable).
import type { MatrixCase } from './harness.ts';

export const kubeCases: MatrixCase[] = [];
