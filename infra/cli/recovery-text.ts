// A recovery plan as a person reads it under `plan`'s result: the survivor, the snapshot, then
// each step with its commands and where each runs. Nothing here runs them.
import type { RecoveryPlan, RunsOn } from '../../functions/core/recovery/index.ts';

const where = (on: RunsOn): string => (on === 'anywhere' ? 'anywhere etcdctl reaches it' : `on ${on.host}`);

export function renderRecovery(plan: RecoveryPlan): string {
  const lines = ['', 'recovery plan (quorum is lost; follow it by hand, nothing here runs it):', `  ${plan.summary}`];
  plan.steps.forEach((step, i) => {
    lines.push(`  ${i + 1}. ${step.what}`);
    for (const command of step.commands) lines.push(`       ${command.run}    # ${where(command.on)}`);
  });
  return lines.join('\n');
}
