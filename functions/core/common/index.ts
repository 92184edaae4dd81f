// The vocabulary every rule speaks: types, decisions and their reason codes, etcd failures' classification, limits on what is said.
export * from './classification-table.ts';
export * from './classify.ts';
export * from './collections.ts';
export * from './decision.ts';
export * from './endpoint-url.ts';
export * from './metrics-urls.ts';
export * from './path-name.ts';
export * from './pod-path.ts';
export * from './reason-table.ts';
export * from './record-version.ts';
export * from './said-limits.ts';
export * from './types.ts';
export * from './view-limits.ts';
