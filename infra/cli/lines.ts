// Lines from a byte stream (run's stdin) with a length limit. readline keeps a line whole however
// long it grows; this keeps at most `limitBytes` of one, and reports a longer one by its size only.

export type LineEvent = { line: string } | { tooLongBytes: number };

export interface LineSplitter {
  push(chunk: Buffer): void;
  /** The last line, when the stream ends without a newline. */
  end(): void;
}

export function splitLines(limitBytes: number, emit: (event: LineEvent) => void): LineSplitter {
  let parts: Buffer[] = [];
  /** Bytes of the current line so far, kept or not. */
  let size = 0;
  const finish = () => {
    if (size > limitBytes) emit({ tooLongBytes: size });
    else emit({ line: Buffer.concat(parts).toString('utf8').replace(/\r$/, '') });
    parts = [];
    size = 0;
  };
  return {
    push(chunk) {
      let from = 0;
      // 0x0a never occurs inside a multi-byte UTF-8 character, so bytes can be split on it.
      for (let nl = chunk.indexOf(0x0a); nl >= 0; nl = chunk.indexOf(0x0a, from)) {
        const piece = chunk.subarray(from, nl);
        size += piece.length;
        if (size <= limitBytes) parts.push(piece);
        finish();
        from = nl + 1;
      }
      const rest = chunk.subarray(from);
      size += rest.length;
      // Past the limit nothing more of the line is kept: only its size is counted.
      if (size <= limitBytes) parts.push(rest);
      else parts = [];
    },
    end() {
      if (size > 0) finish();
    },
  };
}
