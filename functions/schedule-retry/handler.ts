// schedule-retry: RetryRequested in; a one-time schedule that publishes RetryDue.
import { scheduleRetry } from '../app/incident/index.ts';
import type { Deps } from '../app/common/index.ts';
import { eventHandler } from '../lambda/event-handler.ts';

export const createScheduleRetryHandler = (deps: Deps) => eventHandler('schedule-retry', deps, { 'schedule-retry': scheduleRetry });
