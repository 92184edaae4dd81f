// Cluster API and Kubernetes objects, pure: the request's conditions, Events, which Machine or Node an incident saw.
export * from './machine-seen.ts';
export * from './memberless-machine.ts';
export * from './node-seen.ts';
export * from './not-control-plane.ts';
export * from './object-events.ts';
export * from './request-conditions.ts';
export * from './machine-api.ts';
export * from './kubeadm-files.ts';
