// What each simulated controller works with: the fake's store (the API server's storage), the
// clock, and the timeline every controller writes its steps to.
import type { KubeApiFake } from '../fakes/kube/api-server.ts';

export interface TimelineEntry {
  /** Milliseconds since the simulation started. */
  at: number;
  /** The object the step is about (a Machine's name, or the controller's). */
  about: string;
  what: string;
}

export interface SimContext {
  fake: KubeApiFake;
  now(): number;
  /** Records a step on the timeline (each distinct step once in a row per object). */
  said(about: string, what: string): void;
}

export function simContext(fake: KubeApiFake, timeline: TimelineEntry[], startedAt = Date.now()): SimContext {
  const last = new Map<string, string>();
  return {
    fake,
    now: () => Date.now(),
    said(about, what) {
      if (last.get(about) === what) return;
      last.set(about, what);
      timeline.push({ at: Date.now() - startedAt, about, what });
    },
  };
}
