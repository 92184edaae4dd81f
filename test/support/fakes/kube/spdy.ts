// SPDY/3.1 framing for the kube fake's streams, as moby/spdystream reads and writes it (the
// library under client-go's and the kubelet's httpstream/spdy): control frames (SYN_STREAM,
// SYN_REPLY, RST_STREAM, SETTINGS, PING, GOAWAY, HEADERS, WINDOW_UPDATE) and data frames, with
// header blocks zlib-compressed against the SPDY/3 dictionary, one compression context per
// direction for the whole connection (draft-mbelshe-httpbis-spdy-00 §2.2, §2.6, §2.6.10).
import zlib from 'node:zlib';

/** §2.6.10.1: the dictionary, 65 length-prefixed names and values and then a run of common text. */
const DICTIONARY_WORDS = [
  'options',
  'head',
  'post',
  'put',
  'delete',
  'trace',
  'accept',
  'accept-charset',
  'accept-encoding',
  'accept-language',
  'accept-ranges',
  'age',
  'allow',
  'authorization',
  'cache-control',
  'connection',
  'content-base',
  'content-encoding',
  'content-language',
  'content-length',
  'content-location',
  'content-md5',
  'content-range',
  'content-type',
  'date',
  'etag',
  'expect',
  'expires',
  'from',
  'host',
  'if-match',
  'if-modified-since',
  'if-none-match',
  'if-range',
  'if-unmodified-since',
  'last-modified',
  'location',
  'max-forwards',
  'pragma',
  'proxy-authenticate',
  'proxy-authorization',
  'range',
  'referer',
  'retry-after',
  'server',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'user-agent',
  'vary',
  'via',
  'warning',
  'www-authenticate',
  'method',
  'get',
  'status',
  '200 OK',
  'version',
  'HTTP/1.1',
  'url',
  'public',
  'set-cookie',
  'keep-alive',
  'origin',
];
const DICTIONARY_TAIL =
  '100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505203 Non-Authoritative Information204 No Content' +
  '301 Moved Permanently400 Bad Request401 Unauthorized403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented503 Service Unavailable' +
  'Jan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMTchunked,text/html,image/png,image/jpg,image/gif,' +
  'application/xml,application/xhtml+xml,text/plain,text/javascript,publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.';

export const HEADER_DICTIONARY = Buffer.concat([
  ...DICTIONARY_WORDS.map((word) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(word.length);
    return Buffer.concat([length, Buffer.from(word, 'latin1')]);
  }),
  Buffer.from(DICTIONARY_TAIL, 'latin1'),
]);

/** RFC 1950 §9: the checksum a zlib stream names its preset dictionary by. */
export function adler32(data: Buffer): number {
  let a = 1;
  let b = 0;
  for (const byte of data) {
    a = (a + byte) % 65521;
    b = (b + a) % 65521;
  }
  return ((b << 16) | a) >>> 0;
}

const VERSION = 3;
export const FLAG_FIN = 0x01;
const TYPES = { synStream: 1, synReply: 2, rstStream: 3, settings: 4, ping: 6, goAway: 7, headers: 8, windowUpdate: 9 } as const;
/** RST_STREAM status codes (§2.6.3); spdystream's Reset sends CANCEL. */
export const RST_CANCEL = 5;
export const RST_PROTOCOL_ERROR = 1;
/** The largest data frame payload: a 24-bit length. */
export const MAX_DATA_LENGTH = 0xffffff;

/** Header names, lowercased, each with its values (a NUL-separated list on the wire). */
export type SpdyHeaders = Map<string, string[]>;

export type SpdyFrame =
  | { type: 'syn_stream'; streamId: number; flags: number; headers: SpdyHeaders }
  | { type: 'syn_reply' | 'headers'; streamId: number; flags: number; headers: SpdyHeaders }
  | { type: 'rst_stream'; streamId: number; status: number }
  | { type: 'ping'; id: number }
  | { type: 'goaway'; lastGoodStreamId: number; status: number }
  | { type: 'settings' | 'window_update' }
  | { type: 'data'; streamId: number; flags: number; data: Buffer };

function parseHeaderBlock(block: Buffer): SpdyHeaders {
  const headers: SpdyHeaders = new Map();
  let offset = 4;
  const count = block.readUInt32BE(0);
  for (let i = 0; i < count; i++) {
    const nameLength = block.readUInt32BE(offset);
    const name = block.toString('latin1', offset + 4, offset + 4 + nameLength).toLowerCase();
    offset += 4 + nameLength;
    const valueLength = block.readUInt32BE(offset);
    headers.set(name, block.toString('utf8', offset + 4, offset + 4 + valueLength).split('\0'));
    offset += 4 + valueLength;
  }
  return headers;
}

function encodeHeaderBlock(headers: SpdyHeaders): Buffer {
  const parts: Buffer[] = [Buffer.alloc(4)];
  parts[0]!.writeUInt32BE(headers.size);
  for (const [name, values] of headers) {
    for (const text of [name, values.join('\0')]) {
      const bytes = Buffer.from(text, 'utf8');
      const length = Buffer.alloc(4);
      length.writeUInt32BE(bytes.length);
      parts.push(length, bytes);
    }
  }
  return Buffer.concat(parts);
}

function controlFrame(type: number, flags: number, payload: Buffer): Buffer {
  const header = Buffer.alloc(8);
  header.writeUInt16BE(0x8000 | VERSION, 0);
  header.writeUInt16BE(type, 2);
  header.writeUInt32BE(((flags & 0xff) << 24) | payload.length, 4);
  return Buffer.concat([header, payload]);
}

const uint32 = (value: number): Buffer => {
  const buffer = Buffer.alloc(4);
  buffer.writeUInt32BE(value >>> 0);
  return buffer;
};

/**
 * One side of a SPDY connection: push() the bytes as they arrive (a frame may span many reads, a
 * read hold many frames) and get whole frames back; the writers return the bytes of one frame.
 */
export class SpdyFramer {
  private pending: Buffer = Buffer.alloc(0);
  /** The peer's header blocks so far, compressed: its zlib stream is one for the connection. */
  private inflateInput: Buffer = Buffer.alloc(0);
  private inflatedLength = 0;
  private deflateStarted = false;

  push(chunk: Buffer): SpdyFrame[] {
    this.pending = Buffer.concat([this.pending, chunk]);
    const frames: SpdyFrame[] = [];
    while (this.pending.length >= 8) {
      const length = this.pending.readUInt32BE(4) & 0xffffff;
      if (this.pending.length < 8 + length) break;
      const frame = this.pending.subarray(0, 8 + length);
      this.pending = this.pending.subarray(8 + length);
      const parsed = this.parse(frame);
      if (parsed) frames.push(parsed);
    }
    return frames;
  }

  private parse(frame: Buffer): SpdyFrame | undefined {
    const flags = frame[4]!;
    const payload = frame.subarray(8);
    if ((frame[0]! & 0x80) === 0) return { type: 'data', streamId: frame.readUInt32BE(0) & 0x7fffffff, flags, data: Buffer.from(payload) };
    switch (frame.readUInt16BE(2)) {
      case TYPES.synStream:
        return { type: 'syn_stream', streamId: payload.readUInt32BE(0) & 0x7fffffff, flags, headers: this.inflate(payload.subarray(10)) };
      case TYPES.synReply:
        return { type: 'syn_reply', streamId: payload.readUInt32BE(0) & 0x7fffffff, flags, headers: this.inflate(payload.subarray(4)) };
      case TYPES.headers:
        return { type: 'headers', streamId: payload.readUInt32BE(0) & 0x7fffffff, flags, headers: this.inflate(payload.subarray(4)) };
      case TYPES.rstStream:
        return { type: 'rst_stream', streamId: payload.readUInt32BE(0) & 0x7fffffff, status: payload.readUInt32BE(4) };
      case TYPES.ping:
        return { type: 'ping', id: payload.readUInt32BE(0) };
      case TYPES.goAway:
        return { type: 'goaway', lastGoodStreamId: payload.readUInt32BE(0) & 0x7fffffff, status: payload.readUInt32BE(4) };
      case TYPES.settings:
        return { type: 'settings' };
      case TYPES.windowUpdate:
        return { type: 'window_update' };
      default:
        return undefined;
    }
  }

  /**
   * The peer's zlib stream is one for the connection, each block ending on a sync flush: inflating
   * everything received so far and keeping the new tail decodes each block in its context.
   */
  private inflate(compressed: Buffer): SpdyHeaders {
    this.inflateInput = Buffer.concat([this.inflateInput, compressed]);
    const all = zlib.inflateSync(this.inflateInput, { dictionary: HEADER_DICTIONARY, finishFlush: zlib.constants.Z_SYNC_FLUSH });
    const block = all.subarray(this.inflatedLength);
    this.inflatedLength = all.length;
    return parseHeaderBlock(block);
  }

  /**
   * Our header blocks as one zlib stream too: a header naming the dictionary (FDICT and its
   * adler32), then each block deflated on its own and sync-flushed. Deflate blocks that refer to
   * nothing before them are valid anywhere in a stream, so the inflater on the other side, one for
   * the connection, reads each in turn; and a compressed block (not a stored one) ends on its
   * end-of-block code, so Go's flate returns the block without reading past the frame.
   */
  private deflate(headers: SpdyHeaders): Buffer {
    const compressed = zlib.deflateRawSync(encodeHeaderBlock(headers), { finishFlush: zlib.constants.Z_SYNC_FLUSH });
    if (this.deflateStarted) return compressed;
    this.deflateStarted = true;
    // CMF 0x78 (deflate, 32K window); FLG 0xF9: level 3, FDICT, and the check bits.
    return Buffer.concat([Buffer.from([0x78, 0xf9]), uint32(adler32(HEADER_DICTIONARY)), compressed]);
  }

  synReply(streamId: number, headers: SpdyHeaders = new Map(), flags = 0): Buffer {
    return controlFrame(TYPES.synReply, flags, Buffer.concat([uint32(streamId & 0x7fffffff), this.deflate(headers)]));
  }

  rstStream(streamId: number, status: number): Buffer {
    return controlFrame(TYPES.rstStream, 0, Buffer.concat([uint32(streamId & 0x7fffffff), uint32(status)]));
  }

  ping(id: number): Buffer {
    return controlFrame(TYPES.ping, 0, uint32(id));
  }

  goAway(lastGoodStreamId: number, status = 0): Buffer {
    return controlFrame(TYPES.goAway, 0, Buffer.concat([uint32(lastGoodStreamId & 0x7fffffff), uint32(status)]));
  }

  data(streamId: number, data: Buffer, flags = 0): Buffer {
    const header = Buffer.alloc(8);
    header.writeUInt32BE(streamId & 0x7fffffff, 0);
    header.writeUInt32BE(((flags & 0xff) << 24) | data.length, 4);
    return Buffer.concat([header, data]);
  }
}
