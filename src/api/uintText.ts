/**
 * JSON text of many small numbers (the Beacon API's quoted decimal uint64s), written digit by
 * digit into one reused buffer and read back as Latin-1 strings: for an epoch's committees or
 * every balance of a state at a million validators, several times faster than converting each
 * number to a string and joining them.
 */

const QUOTE = 0x22;
const COMMA = 0x2c;
const ZERO = 0x30;
/** a uint64 in decimal has 20 digits at most */
const MAX_UINT_DIGITS = 20;
/** 10^0 .. 10^15: a safe integer has at most 16 digits */
const POWERS_OF_TEN = Array.from({length: 16}, (_, i) => 10 ** i);

/** A uint64 as ssz's JSON writes it: FAR_FUTURE_EPOCH, held as Infinity, is 2^64 - 1. */
export const uint64Text = (n: number): string => (n === Infinity ? "18446744073709551615" : String(n));

/** ASCII text written byte by byte; `take` hands on what was written as a string and starts again. */
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

  byte(b: number): void {
    this.reserve(1);
    this.bytes[this.at++] = b;
  }

  /** A uint64 in decimal, as `uint64Text` writes it. */
  uint(n: number): void {
    if (!Number.isSafeInteger(n) || n < 0) {
      this.ascii(Buffer.from(uint64Text(n), "latin1"));
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

  /** The text written since the last take. */
  take(): string {
    const text = this.bytes.toString("latin1", 0, this.at);
    this.at = 0;
    return text;
  }
}

const scratch = new AsciiWriter();

/** `values.map((v) => `"${v}"`).join(",")`, for non-negative integers. */
export function quotedUintList(values: ArrayLike<number>): string {
  for (let i = 0; i < values.length; i++) {
    if (i > 0) scratch.byte(COMMA);
    scratch.byte(QUOTE);
    scratch.uint(values[i]);
    scratch.byte(QUOTE);
  }
  return scratch.take();
}
