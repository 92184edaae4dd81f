// A single-remediator cluster (policy singleRemediator) keeps its lock and removal record in one
// state store: safe only while nothing else remediates it. Every message of its incidents says
// so, so that nobody reads one of them and starts a second remediator beside it.
export const singleRemediatorNote = (clusterId: string): string =>
  `(cluster ${clusterId} is a single-remediator cluster by policy: its lock and removal record are kept in this state store only, and a remediator with another state sees neither)`;

/** The message with the note once at its end. */
export function withSingleRemediatorNote(message: string, clusterId: string): string {
  const note = singleRemediatorNote(clusterId);
  return message.endsWith(note) ? message : `${message} ${note}`;
}
