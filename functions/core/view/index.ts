// The cluster view: one probe folded into what decisions need, the target it names, who leads and the evidence, in plain words.
export * from './bounded-view.ts';
export * from './cluster-identity.ts';
export * from './credentials.ts';
export * from './disruption.ts';
export * from './evidence.ts';
export * from './explain.ts';
export * from './host-gone.ts';
export * from './target.ts';
export * from './view-history.ts';
export * from './view.ts';
