// The lab waits the way the runtime does: on a condition, with a deadline.
export { WaitAborted, waitFor, type WaitOptions } from '../../../functions/shared/wait-for.ts';
