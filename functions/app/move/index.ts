// move-leader: the decision carried out over every path to the leader and every candidate.
export * from './move-leader.ts';
export * from './run-move.ts';
