// intake: outside health signals in, MemberUnhealthy on our bus out.
export * from './intake.ts';
