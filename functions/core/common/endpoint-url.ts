// An endpoint written with credentials in it (`http://root:password@10.0.0.1:2379`). etcd never
// reads them there, while every place that shows or keeps an endpoint (progress lines, events,
// journals, the state file, a registration) would keep the password: such an endpoint is refused
// wherever one comes in, and the refusal shows it only without its user-info.

/** The user-info of an authority, with or without a scheme before it: everything up to the host's `@`. */
const USER_INFO = /^((?:[a-z][a-z0-9+.-]*:)?\/\/)?[^/?#]*@/i;

/**
 * True when the text has user-info (a user, a password or both) before its host. Read from the
 * text, not from a URL parser, so `root:pw@host:2379` without a scheme counts too.
 */
export const carriesCredentials = (endpoint: string): boolean => USER_INFO.test(endpoint);

/** The endpoint as a message may show it: `http://***@10.0.0.1:2379`. */
export const withoutCredentials = (endpoint: string): string => endpoint.replace(USER_INFO, (_, scheme: string | undefined) => `${scheme ?? ''}***@`);

/** What an event or registration field with such an endpoint is told. */
export const CREDENTIALS_IN_URL = 'carries credentials (user-info before @): they are not taken in a URL, where logs, events and stored state would keep them';
