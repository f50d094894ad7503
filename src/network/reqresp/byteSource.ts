import type {Stream} from "@libp2p/interface";
import {Uint8ArrayList} from "uint8arraylist";
import {ReqRespError} from "./errors.ts";

/** Unread input above which the stream is paused until the reader catches up. */
const HIGH_WATER_MARK = 1024 * 1024;

/**
 * The readable side of a libp2p message stream as a pull source: received bytes gather in
 * `buffer`, which the decoders consume from, and `fill` waits for more. Listening to the stream's
 * events directly (rather than its async iterator) also sees an end that happened before the
 * reader was attached, and pausing the stream bounds what is held unread.
 */
export class ByteSource {
  readonly buffer = new Uint8ArrayList();
  private ended: boolean;
  private error: Error | null = null;
  private paused = false;
  private wake: (() => void) | null = null;
  private readonly stream: Stream;

  constructor(stream: Stream) {
    this.stream = stream;
    this.ended = stream.readableEnded;
    stream.addEventListener("message", (evt) => {
      if (evt.data instanceof Uint8Array) this.buffer.append(evt.data);
      else for (const part of evt.data) this.buffer.append(part);
      if (!this.paused && this.buffer.byteLength > HIGH_WATER_MARK && stream.readStatus === "readable") {
        this.paused = true;
        stream.pause();
      }
      this.notify();
    });
    stream.addEventListener("end", () => {
      this.ended = true;
      this.notify();
    });
    stream.addEventListener("close", (evt) => {
      if (evt.error) this.error = evt.error;
      this.ended = true;
      this.notify();
    });
  }

  /**
   * Waits for more input: true once some arrived, false at the end of the stream. Throws the
   * signal's reason when it aborts first, and a STREAM_ERROR when the stream was reset.
   */
  async fill(signal?: AbortSignal): Promise<boolean> {
    if (this.paused && this.buffer.byteLength <= HIGH_WATER_MARK) {
      this.paused = false;
      this.stream.resume();
    }
    const before = this.buffer.byteLength;
    while (this.buffer.byteLength === before) {
      if (this.error) throw new ReqRespError("STREAM_ERROR", `stream failed: ${this.error.message}`);
      if (this.ended) return false;
      signal?.throwIfAborted();
      await new Promise<void>((resolve) => {
        const onAbort = (): void => resolve();
        signal?.addEventListener("abort", onAbort, {once: true});
        this.wake = () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        };
      });
      this.wake = null;
    }
    return true;
  }

  /** Waits until `n` bytes are buffered; false if the stream ends first. */
  async need(n: number, signal?: AbortSignal): Promise<boolean> {
    while (this.buffer.byteLength < n) {
      if (!(await this.fill(signal))) return false;
    }
    return true;
  }

  /** Waits for the end of the stream; false if more bytes arrive instead. */
  async atEnd(signal?: AbortSignal): Promise<boolean> {
    if (this.buffer.byteLength > 0) return false;
    return !(await this.fill(signal));
  }

  private notify(): void {
    this.wake?.();
  }
}
