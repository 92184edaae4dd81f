// The leader move: the pure driver of the move loop and the label an outcome carries.
export * from './leader-move.ts';
export * from './move-steps.ts';
