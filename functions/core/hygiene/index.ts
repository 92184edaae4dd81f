// Leader hygiene: the signals a scrape gives, when a leader is degraded, which follower takes over, what holds a move back.
export * from './hygiene-alert.ts';
export * from './hygiene-facts.ts';
export * from './hygiene-history.ts';
export * from './hygiene-holds.ts';
export * from './hygiene-moves.ts';
export * from './hygiene-record-stored.ts';
export * from './hygiene-record.ts';
export * from './hygiene-round.ts';
export * from './hygiene-shared-cause.ts';
export * from './hygiene-signals-from.ts';
export * from './hygiene-signals.ts';
export * from './hygiene-target.ts';
export * from './hygiene-unknown.ts';
export * from './leader-degradation.ts';
export * from './leader-hygiene.ts';
