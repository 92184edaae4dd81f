// Watches for the kube fake: `GET <collection>?watch=true`, answered as the API server answers it
// (k8s.io/apiserver pkg/endpoints/handlers/watch.go): 200, Content-Type application/json,
// Transfer-Encoding chunked, then one JSON line per event, {"type":"ADDED|MODIFIED|DELETED|BOOKMARK|
// ERROR","object":{…}}, for as long as the connection stays open.
//
// From a resourceVersion the events are the changes after it, replayed from the store's bounded
// history; a resourceVersion older than that history gets one ERROR event carrying a 410 Expired
// Status, "too old resource version: X (Y)", and the end of the stream (k8s.io/apiserver
// pkg/storage/cacher cacher.go newErrWatcher, watch_cache.go; apimachinery errors.NewResourceExpired).
// Without a resourceVersion (or "0") the watch starts with a synthetic ADDED for every object.
import type { ServerResponse } from 'node:http';
import type { Json, JsonObject } from './patch.ts';
import { apiVersion, parsePath, shown, type Route } from './routes.ts';
import { type Filter, fieldFilter } from './field-selectors.ts';
import { KubeFakeError } from './status.ts';
import { type Change, type ObjectStore, matchesSelector, metadataOf } from './store.ts';

/** How a dropped watch ends: `reset` kills the connection (a network blip), `end` closes the stream cleanly (the server's watch timeout). */
export type DropMode = 'reset' | 'end';

export interface WatchHub {
  /** Serves `url` if it asks for a watch of a known collection; false leaves it to the REST routes. */
  serve(url: URL, response: ServerResponse): boolean;
  /** Test hook: closes every open watch. */
  drop(mode: DropMode): void;
  /** Test hook: a BOOKMARK now on every watch that allowed them. */
  bookmark(): void;
  /** How many watches are open. */
  readonly open: number;
}

/** `watch=true`, `watch=1`: anything but false/0, as apiserver's requestinfo.go reads it. */
export function isWatch(url: URL): boolean {
  const value = url.searchParams.get('watch');
  return value !== null && value !== '' && !['false', '0'].includes(value.toLowerCase());
}

function expired(message: string): JsonObject {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: 'Expired', code: 410 };
}

/** The event a watch with `matches` sees for a change: objects entering or leaving its filter are ADDED or DELETED. */
function eventFor(change: Change, matches: Filter): { type: string; object: JsonObject } | undefined {
  const now = matches(change.object);
  if (change.type === 'DELETED') return now ? { type: 'DELETED', object: change.object } : undefined;
  const before = change.previous !== undefined && matches(change.previous);
  if (now) return { type: before ? 'MODIFIED' : 'ADDED', object: change.object };
  return before ? { type: 'DELETED', object: change.object } : undefined;
}

interface OpenWatch {
  response: ServerResponse;
  bookmarks: boolean;
  route: Route;
  close: () => void;
}

export function watchServer(store: ObjectStore): WatchHub {
  const watches = new Set<OpenWatch>();

  function start(route: Route, url: URL, response: ServerResponse): void {
    const params = url.searchParams;
    const labels = params.get('labelSelector');
    const fields = fieldFilter(route.type, params.get('fieldSelector'));
    const matches: Filter = (object) =>
      (route.namespace === undefined || !route.type.namespaced || metadataOf(object).namespace === route.namespace) &&
      matchesSelector(metadataOf(object).labels, labels) &&
      fields(object);
    const write = (type: string, object: Json) => response.write(`${JSON.stringify({ type, object })}\n`);

    response.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked', 'Cache-Control': 'no-cache, private' });
    response.flushHeaders();

    const from = params.get('resourceVersion') ?? '';
    const resume = from === '' || from === '0' ? undefined : store.changesSince(Number(from));
    if (resume && 'tooOld' in resume) {
      write('ERROR', expired(resume.tooOld));
      response.end();
      return;
    }
    const send = (change: Change) => {
      if (change.resource !== route.type) return;
      const event = eventFor(change, matches);
      // Each object in the version the watch asked for (capi-conversion.ts).
      if (event) write(event.type, shown(route, event.object));
    };
    // Replay and subscription happen in one synchronous step: no change can fall between them.
    if (resume) resume.changes.forEach(send);
    else for (const object of store.list(route.type, route.namespace, labels).filter(fields)) write('ADDED', shown(route, object));
    const unsubscribe = store.subscribe(send);

    const seconds = Number(params.get('timeoutSeconds') ?? 0);
    const timer = seconds > 0 ? setTimeout(() => response.end(), seconds * 1000) : undefined;
    const watch: OpenWatch = {
      response,
      bookmarks: params.get('allowWatchBookmarks') === 'true',
      route,
      close: () => {
        unsubscribe();
        clearTimeout(timer);
        watches.delete(watch);
      },
    };
    watches.add(watch);
    response.on('close', watch.close);
  }

  return {
    serve(url, response) {
      const route = parsePath(url.pathname);
      if (!isWatch(url) || !route || route.name !== undefined) return false;
      try {
        start(route, url, response);
      } catch (error) {
        if (!(error instanceof KubeFakeError)) throw error;
        const body = JSON.stringify(error.status);
        response.writeHead(error.status.code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
        response.end(body);
      }
      return true;
    },
    drop(mode) {
      for (const watch of [...watches]) {
        watch.close();
        if (mode === 'end') watch.response.end();
        else watch.response.socket?.destroy();
      }
    },
    bookmark() {
      for (const watch of watches) {
        if (!watch.bookmarks) continue;
        const object = { kind: watch.route.type.kind, apiVersion: apiVersion(watch.route), metadata: { resourceVersion: store.resourceVersion } };
        watch.response.write(`${JSON.stringify({ type: 'BOOKMARK', object })}\n`);
      }
    },
    get open() {
      return watches.size;
    },
  };
}
