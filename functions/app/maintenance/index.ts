// Maintenance's steps against a cluster: one a delivery, planned again from etcd before each.
export * from './maintain.ts';
