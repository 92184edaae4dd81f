// A cluster's metricsUrls as every edge takes them (run's config, a registration): member name or
// id → the base URL where that member serves /metrics (etcd's --listen-metrics-urls). Only an
// absolute http or https URL; one with credentials is refused first, alone, without quoting it.
import { z } from 'zod';
import { carriesCredentials, CREDENTIALS_IN_URL } from './endpoint-url.ts';

export const NOT_A_METRICS_URL = 'must be an http or https URL';

export function isMetricsUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

const metricsUrl = z
  .string({ error: NOT_A_METRICS_URL })
  .refine((url) => !carriesCredentials(url), { message: CREDENTIALS_IN_URL, abort: true })
  .refine(isMetricsUrl, NOT_A_METRICS_URL);

/** Keyed by member name or id; an issue's path ends in the key, e.g. metricsUrls.etcd-1. */
export const metricsUrlsSchema = z.record(z.string().trim().min(1, 'a member name or id must not be empty'), metricsUrl);
