// Every decision names the rule that made it in evidence.decidedBy, so an operator reading an
// outcome can find the rule: a check of plan(), or one of the rules the steps apply on their own.
import type { Evidence } from './decision.ts';

export const decidedBy = <D extends { evidence: Evidence }>(decision: D, rule: string): D => ({
  ...decision,
  evidence: { ...decision.evidence, decidedBy: rule },
});
