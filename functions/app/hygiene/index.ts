// Leader hygiene's periodic check and its move.
export * from './hygiene-move.ts';
export * from './leader-hygiene-check.ts';
