// A file inside an etcd pod that the exec relay names to the container: etcdctl itself and the
// certificates it reads. They travel as argv, never through a shell, but a relative path would
// resolve in the container's working directory, and a space or a shell character is a copy of a
// shell command line rather than a path an image holds. One check for every edge that takes one.

/** PATH_MAX on Linux. */
const MAX_LENGTH = 4_096;

/** What a path in an image is made of; anything else is refused and named. */
const TAKEN = /^[A-Za-z0-9._+@%,:=/-]$/;

const shown = (char: string): string => (char === ' ' ? 'a space' : JSON.stringify(char));

/** Why `text` cannot name a file inside the pod, or undefined when it can. */
export function podPathProblem(text: string): string | undefined {
  if (text === '') return 'must not be empty: give an absolute path inside the etcd pod';
  // Before anything quotes it.
  if (text.length > MAX_LENGTH) return `is longer than ${MAX_LENGTH} characters`;
  if (!text.startsWith('/')) return `${JSON.stringify(text)} is not an absolute path: a relative one would resolve in the etcd container's working directory`;
  const odd = [...text].find((char) => !TAKEN.test(char));
  if (odd !== undefined)
    return `${JSON.stringify(text)} holds ${shown(odd)}: a path inside the etcd pod takes letters, digits and . _ + @ % , : = - / only (no whitespace or shell characters)`;
  if (text.endsWith('/')) return `${JSON.stringify(text)} ends in /: name the file, not its directory`;
  return undefined;
}
