import type {Stream} from "@libp2p/interface";
import {ByteSource} from "../../../../src/network/reqresp/byteSource.ts";

/**
 * The readable side of a libp2p message stream, fed by the test: just the events ByteSource
 * listens to. For the encoding rules alone; the wire tests use real libp2p streams.
 */
class FakeReadable extends EventTarget {
  readableEnded = false;
  readStatus = "readable";
  pause(): void {}
  resume(): void {}

  deliver(data: Uint8Array): void {
    this.dispatchEvent(Object.assign(new Event("message"), {data}));
  }

  end(): void {
    this.readableEnded = true;
    this.dispatchEvent(new Event("end"));
  }
}

/** A source that receives `bytes` in pieces of `pieceSize`, then (unless `open`) the end of the stream. */
export function sourceOf(bytes: Uint8Array, opts: {pieceSize?: number; open?: boolean} = {}): ByteSource {
  const stream = new FakeReadable();
  const source = new ByteSource(stream as unknown as Stream);
  const pieceSize = opts.pieceSize ?? 7;
  void (async () => {
    for (let i = 0; i < bytes.length; i += pieceSize) {
      await new Promise((resolve) => setImmediate(resolve));
      stream.deliver(bytes.slice(i, i + pieceSize));
    }
    await new Promise((resolve) => setImmediate(resolve));
    if (!opts.open) stream.end();
  })();
  return source;
}
