// One-time events at a given instant. Names are deterministic, so scheduling the same name again
// replaces the pending event instead of adding a second one.

export interface ScheduledEvent {
  detailType: string;
  detail: unknown;
}

export interface ScheduleRequest {
  name: string;
  /** Epoch milliseconds. */
  at: number;
  event: ScheduledEvent;
}

export interface Scheduler {
  schedule(request: ScheduleRequest): Promise<void>;
  /** Cancelling a name that is not pending is not an error. */
  cancel(name: string): Promise<void>;
}
