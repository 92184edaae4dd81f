// Pod exec over plain SPDY, as kubectl 1.27–1.29 speaks it and the API server proxies it raw to the
// kubelet (kube-paths.md §0.3: no v5.channel.k8s.io, so no translator), whose remotecommand server
// answers it: kubelet pkg/kubelet/cri/streaming/remotecommand/httpstream.go (createHTTPStreamStreams,
// waitForStreams, v4WriteStatusFunc / v1WriteStatusFunc) over apimachinery
// pkg/util/httpstream/spdy (the response upgrader, one SYN_REPLY per stream). The client opens one
// stream per `streamType` header (error, stdin, stdout, stderr, resize); once every stream the
// options call for is there the command runs, its output goes out as DATA on stdout/stderr, its
// Status on the error stream, and the connection is closed as ServeExec's deferred conn.Close()
// does: every stream reset (RST_STREAM CANCEL), then GOAWAY and the socket.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { spdyHandshake } from './portforward.ts';
import { FLAG_FIN, MAX_DATA_LENGTH, RST_CANCEL, SpdyFramer, type SpdyFrame } from './spdy.ts';

/** The command's end as the kubelet has it, a metav1.Status (exec.ts ChannelStatus fits). */
export interface ExecStatus {
  status: 'Success' | 'Failure';
  message?: string;
}

/** Where a running command's output goes; finish() comes once, after all of it. */
export interface ExecOutput<Status extends ExecStatus = ExecStatus> {
  stdout(chunk: Buffer): void;
  stderr(chunk: Buffer): void;
  finish(status: Status): void;
}

/** The running command, as the session feeds it. */
export interface ExecInput {
  write(chunk: Buffer): void;
  end(): void;
  kill(): void;
}

export interface SpdyExecOptions {
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
}

// remotecommandconsts.SupportedStreamingProtocols, the kubelet's list (v5 is the translator's, WebSocket only).
const V4 = 'v4.channel.k8s.io';
const V3 = 'v3.channel.k8s.io';
const V2 = 'v2.channel.k8s.io';
const SUPPORTED_PROTOCOLS = [V4, V3, V2, 'channel.k8s.io'];
/** remotecommandconsts.DefaultStreamCreationTimeout: how long the kubelet waits for the client's streams. */
const STREAM_CREATION_TIMEOUT_MS = 30_000;

type StreamType = 'error' | 'stdin' | 'stdout' | 'stderr' | 'resize';

/**
 * Answers the upgrade (httpstream.Handshake + spdy.NewResponseUpgrader) and serves the session on
 * the raw connection; `start` runs the command once the streams are there. False when the
 * handshake refused the upgrade (it answered on the socket).
 */
export function serveSpdyExec(
  request: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  options: SpdyExecOptions,
  start: (output: ExecOutput) => ExecInput,
): boolean {
  const protocol = spdyHandshake(request, socket, SUPPORTED_PROTOCOLS);
  if (protocol === undefined) return false;
  const framer = new SpdyFramer();
  const streams = new Map<StreamType, number>();
  const all = new Set<number>();
  /** Streams the client reset: nothing more is written on them. */
  const reset = new Set<number>();
  let gone = false;
  let input: ExecInput | undefined;
  /** Stdin that arrived before the command started, and whether its FIN did. */
  const early: Buffer[] = [];
  let stdinDone = false;
  const write = (bytes: Buffer) => {
    if (!gone) socket.write(bytes);
  };

  // createHTTPStreamStreams: the error stream, one per requested std stream, and resize for a TTY from v3 on.
  const resizing = protocol === V4 || protocol === V3;
  const expected = 1 + Number(options.stdin) + Number(options.stdout) + Number(options.stderr) + Number(options.tty && resizing);
  // waitForStreams: the kubelet gives up after the stream-creation timeout (it only logs it).
  const creation = setTimeout(() => close(), STREAM_CREATION_TIMEOUT_MS);
  creation.unref();

  function send(type: StreamType, data: Buffer): void {
    const id = streams.get(type);
    if (id === undefined || reset.has(id)) return;
    for (let offset = 0; offset < data.length; offset += MAX_DATA_LENGTH) write(framer.data(id, data.subarray(offset, offset + MAX_DATA_LENGTH)));
  }

  /** ServeExec's deferred conn.Close(): apimachinery spdy connection.Close resets every stream, spdystream sends GOAWAY. */
  function close(): void {
    if (gone) return;
    clearTimeout(creation);
    for (const id of all) if (!reset.has(id)) write(framer.rstStream(id, RST_CANCEL));
    write(framer.goAway(Math.max(0, ...all)));
    gone = true;
    socket.end();
  }

  function finish(status: ExecStatus): void {
    // v4WriteStatusFunc: the Status as JSON, success too; v1WriteStatusFunc (v1–v3): only a failure, as its Error() text.
    if (protocol === V4) send('error', Buffer.from(JSON.stringify(status)));
    else if (status.status !== 'Success') send('error', Buffer.from(status.message ?? ''));
    close();
  }

  function onSynStream(frame: Extract<SpdyFrame, { type: 'syn_stream' }>): void {
    // apimachinery spdy connection.newSpdyStream: every stream gets its reply, known type or not.
    write(framer.synReply(frame.streamId));
    all.add(frame.streamId);
    const type = frame.headers.get('streamtype')?.[0] ?? '';
    // waitForStreams counts only the types it knows (resize from v3 on); others are logged and left.
    if (!['error', 'stdin', 'stdout', 'stderr'].includes(type) && !(type === 'resize' && resizing)) return;
    streams.set(type as StreamType, frame.streamId);
    if (input || streams.size < expected) return;
    clearTimeout(creation);
    input = start({ stdout: (chunk) => send('stdout', chunk), stderr: (chunk) => send('stderr', chunk), finish });
    for (const chunk of early.splice(0)) input.write(chunk);
    if (stdinDone) input.end();
  }

  function onData(frame: Extract<SpdyFrame, { type: 'data' }>): void {
    // Only stdin carries anything the fake reads; a resize's TerminalSize JSON changes nothing here.
    if (frame.streamId !== streams.get('stdin')) return;
    if (frame.data.length > 0) {
      if (input) input.write(frame.data);
      else early.push(frame.data);
    }
    if ((frame.flags & FLAG_FIN) !== 0) {
      stdinDone = true;
      input?.end();
    }
  }

  const receive = (chunk: Buffer) => {
    for (const frame of framer.push(chunk)) {
      if (frame.type === 'syn_stream') onSynStream(frame);
      else if (frame.type === 'data') onData(frame);
      else if (frame.type === 'rst_stream') reset.add(frame.streamId);
      // spdystream handlePingFrame: a client's ping (odd id) is echoed.
      else if (frame.type === 'ping' && frame.id % 2 === 1) write(framer.ping(frame.id));
    }
  };
  socket.on('data', receive);
  socket.on('close', () => {
    gone = true;
    clearTimeout(creation);
    // The client went away: the exec's streams with it, and the process is killed.
    input?.kill();
  });
  if (head.length > 0) receive(head);
  return true;
}
