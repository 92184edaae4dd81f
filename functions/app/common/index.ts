// What every step shares: the deps, at-least-once steps, the incident's envelopes and effects, the planner's input, MemberRemove.
export * from './decision-effects.ts';
export * from './deps.ts';
export * from './incident-events.ts';
export * from './plan-incident.ts';
export * from './remove-member.ts';
export * from './step.ts';
