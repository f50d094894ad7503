/**
 * JSON text of the API's largest lists (every validator, balance or committee member of a state)
 * written byte by byte into one reused buffer and handed on as pieces of about 16 KB, bytes the
 * server writes to the socket as they are:
 * the Beacon API's quoted decimal uint64s digit by digit, and 0x hex by a table. Converting each
 * number and root to a string of its own, and joining those, made most of a million-validator
 * list's time and nearly all of its garbage. ASCII text only.
 */

const QUOTE = 0x22;
const COMMA = 0x2c;
const ZERO = 0x30;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
/** a uint64 in decimal has 20 digits at most */
const MAX_UINT_DIGITS = 20;
/** 10^0 .. 10^15: a safe integer has at most 16 digits */
const POWERS_OF_TEN = Array.from({length: 16}, (_, i) => 10 ** i);
/** FAR_FUTURE_EPOCH, held as Infinity by ssz, is 2^64 - 1 in JSON */
const MAX_UINT64_TEXT = "18446744073709551615";
const MAX_UINT64_BYTES = Buffer.from(MAX_UINT64_TEXT, "latin1");
/** the two hex digits of each byte value, as character codes */
const HEX_PAIRS = Uint16Array.from({length: 256}, (_, b) => {
  const digits = b.toString(16).padStart(2, "0");
  return digits.charCodeAt(0) | (digits.charCodeAt(1) << 8);
});

/** Characters of list text gathered before a piece is handed on (the server's write size). */
export const PIECE_CHARS = 16 * 1024;

/** A uint64 as ssz's JSON writes it: FAR_FUTURE_EPOCH, held as Infinity, is 2^64 - 1. */
export const uint64Text = (n: number): string => (n === Infinity ? MAX_UINT64_TEXT : String(n));

/** ASCII text written byte by byte; `take` hands on what was written, as bytes of its own, and starts again. */
export class AsciiWriter {
  private bytes: Buffer;
  private at = 0;

  constructor(capacity = 64 * 1024) {
    this.bytes = Buffer.allocUnsafe(capacity);
  }

  get length(): number {
    return this.at;
  }

  /** Room for `n` more bytes (the text so far kept). */
  reserve(n: number): void {
    if (this.at + n <= this.bytes.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.at + n));
    this.bytes.copy(grown, 0, 0, this.at);
    this.bytes = grown;
  }

  /** Bytes of text known in advance (ASCII), e.g. `Buffer.from('{"index":"')`. */
  ascii(text: Uint8Array): void {
    this.reserve(text.length);
    this.bytes.set(text, this.at);
    this.at += text.length;
  }

  /** A short ASCII string (a status name): for text known in advance, `ascii` with its bytes. */
  text(s: string): void {
    this.reserve(s.length);
    this.at += this.bytes.write(s, this.at, "latin1");
  }

  byte(b: number): void {
    this.reserve(1);
    this.bytes[this.at++] = b;
  }

  /** A uint64 in decimal, as `uint64Text` writes it. */
  uint(n: number): void {
    if (!Number.isSafeInteger(n) || n < 0) {
      if (n === Infinity) this.ascii(MAX_UINT64_BYTES);
      else this.text(uint64Text(n));
      return;
    }
    this.reserve(MAX_UINT_DIGITS);
    let digits = 1;
    while (digits < POWERS_OF_TEN.length && n >= POWERS_OF_TEN[digits]) digits++;
    const bytes = this.bytes;
    let at = (this.at += digits);
    // least significant digit last; 32-bit integer division while it fits
    while (n > 0x7fffffff) {
      const q = Math.floor(n / 10);
      bytes[--at] = ZERO + (n - q * 10);
      n = q;
    }
    do {
      const q = (n / 10) | 0;
      bytes[--at] = ZERO + (n - q * 10);
      n = q;
    } while (n > 0);
  }

  /** `"<n>"`: a uint64 as the Beacon API quotes it. */
  quotedUint(n: number): void {
    this.byte(QUOTE);
    this.uint(n);
    this.byte(QUOTE);
  }

  /** Lowercase hex digits of `data`, without the 0x. */
  hex(data: Uint8Array): void {
    this.reserve(data.length * 2);
    const bytes = this.bytes;
    let at = this.at;
    for (let i = 0; i < data.length; i++) {
      const pair = HEX_PAIRS[data[i]];
      bytes[at++] = pair & 0xff;
      bytes[at++] = pair >> 8;
    }
    this.at = at;
  }

  /** `"1","2","3"`: the items of a list of uint64s, without the brackets. */
  quotedUints(values: ArrayLike<number>): void {
    for (let i = 0; i < values.length; i++) {
      if (i > 0) this.byte(COMMA);
      this.quotedUint(values[i]);
    }
  }

  /** The text written since the last take: a copy, as the writer goes on in the same buffer. */
  take(): Buffer {
    const text = Buffer.allocUnsafe(this.at);
    this.bytes.copy(text, 0, 0, this.at);
    this.at = 0;
    return text;
  }
}

/**
 * One writer for every list being written: a list's generator writes only between its yields,
 * and empties the writer (takes the piece) before each yield, so lists written in turns never
 * mix. A writer per list would allocate a 16 KB buffer outside the V8 heap at every request.
 */
const pieceWriter = new AsciiWriter(PIECE_CHARS + 1024);

/** The JSON list `[item,item,…]` of `items`, each written by `write`, in pieces of about `pieceChars` characters. */
export function* writtenList<T>(items: Iterable<T>, write: (out: AsciiWriter, item: T) => void, pieceChars = PIECE_CHARS): Generator<Uint8Array> {
  const out = pieceWriter;
  try {
    out.byte(OPEN_ARRAY);
    let first = true;
    for (const item of items) {
      if (!first) out.byte(COMMA);
      first = false;
      write(out, item);
      if (out.length >= pieceChars) yield out.take();
    }
    out.byte(CLOSE_ARRAY);
    yield out.take();
  } catch (err) {
    // an item or the list that failed leaves no text behind for the next list
    out.take();
    throw err;
  }
}
