// PodStreams on @kubernetes/client-node's own Exec and PortForward, over a transport that keeps
// what the API server said when it refused (stream-transport.ts); the classes of failure, and
// the texts they come from, are in stream-diagnosis.ts and shared/notes/kube-paths.md.
import { Writable } from 'node:stream';
import { Exec, type KubeConfig, type V1Status } from '@kubernetes/client-node';
import type WebSocket from 'ws';
import { withTimeout } from '../../../lib/with-timeout.ts';
import { openLocalForward } from '../port-forward/pod-forward.ts';
import { PodStreamError, type ExecResult, type LocalForward, type PodRef, type PodStreams } from './pod-streams.ts';
import { diagnoseConnectError, diagnoseExecStatus, execClosed, execTimeout, exitCodeOf, streamsClosed } from './stream-diagnosis.ts';
import { streamTransport } from './stream-transport.ts';

export interface PodStreamsOptions {
  /** The container exec runs in when the PodRef names none (default `etcd`, kubeadm's only one). */
  defaultContainer?: string;
  /** How long one forwarded connection's upgrade may take (default 10 s, CAPI KCP's dial timeout). */
  forwardHandshakeTimeoutMs?: number;
}

/** A Writable that keeps what it is given, for an exec's stdout or stderr. */
export function collector(): { stream: Writable; text: () => string } {
  const chunks: Buffer[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk);
      done();
    },
  });
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

export function createPodStreams(config: KubeConfig, options: PodStreamsOptions = {}): PodStreams {
  const defaultContainer = options.defaultContainer ?? 'etcd';
  const handshakeTimeoutMs = options.forwardHandshakeTimeoutMs ?? 10_000;
  const forwards = new Map<string, Promise<LocalForward>>();
  /** Ends a running exec, its socket included, as closed by the caller. */
  const running = new Set<() => void>();
  let closed = false;

  function exec(pod: PodRef, argv: string[], deadlineMs: number): Promise<ExecResult> {
    if (closed) return Promise.reject(streamsClosed('exec', pod));
    const late = () => execTimeout(pod, deadlineMs);
    return withTimeout(
      deadlineMs,
      (deadline) =>
        new Promise<ExecResult>((resolve, reject) => {
          const [stdout, stderr] = [collector(), collector()];
          let ws: WebSocket | undefined;
          let done = false;
          const finish = (outcome: ExecResult | PodStreamError) => {
            if (done) return;
            done = true;
            running.delete(abort);
            if (!(outcome instanceof PodStreamError)) return resolve(outcome);
            ws?.terminate();
            reject(outcome);
          };
          const abort = () => finish(streamsClosed('exec', pod));
          running.add(abort);
          // Past the deadline the stream ends, its socket included.
          deadline.addEventListener('abort', () => finish(late()));
          const transport = streamTransport(config, {
            onSocket: (socket) => {
              ws = socket;
              if (done) socket.terminate();
              let opened = false;
              socket.on('open', () => (opened = true));
              // client-node drops what happens after open (kube-paths.md §4): a stream that ends
              // without a Status rejects here instead of hanging. Before open, the rejection of
              // exec() below carries the diagnosis.
              socket.on('close', (code, reason) => {
                if (opened)
                  finish(execClosed(pod, `the stream closed (code ${code}${reason.length > 0 ? `: ${reason.toString()}` : ''}) before a Status arrived`));
              });
            },
          });
          const onStatus = (status: V1Status) => {
            const exitCode = exitCodeOf(status);
            finish(exitCode === undefined ? diagnoseExecStatus(pod, status) : { stdout: stdout.text(), stderr: stderr.text(), exitCode });
          };
          new Exec(config, transport)
            .exec(pod.namespace, pod.name, pod.container ?? defaultContainer, argv, stdout.stream, stderr.stream, null, false, onStatus)
            .catch((error: unknown) => finish(diagnoseConnectError('exec', pod, error)));
        }),
      late,
    );
  }

  function forward(pod: PodRef, port: number): Promise<LocalForward> {
    if (closed) return Promise.reject(streamsClosed('port-forward', pod));
    const key = `${pod.namespace}/${pod.name}:${port}`;
    const cached = forwards.get(key);
    if (cached) return cached;
    const opening: Promise<LocalForward> = openLocalForward(config, pod, port, {
      handshakeTimeoutMs,
      onClose: () => forwards.get(key) === opening && forwards.delete(key),
    });
    forwards.set(key, opening);
    opening.catch(() => forwards.get(key) === opening && forwards.delete(key));
    return opening;
  }

  return {
    exec,
    forward,
    async close() {
      closed = true;
      for (const abort of [...running]) abort();
      const all = [...forwards.values()];
      forwards.clear();
      await Promise.all(
        all.map((opening) =>
          opening.then(
            (f) => f.close(),
            () => undefined,
          ),
        ),
      );
    },
  };
}
