import {createRequire} from "node:module";
import {pathToFileURL} from "node:url";

/** the fields of uint8arraylist's list that `consume` reads and writes (public in its 3.x) */
interface ByteList {
  bufs: Uint8Array[];
  length: number;
  consume(bytes: number): void;
}

// the copy of uint8arraylist that @libp2p/utils' streams (yamux's, the connection's) use
const utilsUrl = import.meta.resolve("@libp2p/utils");
const {Uint8ArrayList} = (await import(pathToFileURL(createRequire(utilsUrl).resolve("uint8arraylist")).href)) as {Uint8ArrayList: {prototype: ByteList}};

const patched = Symbol("consumeWholeBuffersAtOnce");

/**
 * @libp2p/utils' message streams keep what waits to be sent in a Uint8ArrayList and take each
 * frame's worth off its front with `consume`, which drops the list's buffers one `shift()` at a
 * time. Behind a peer that reads slowly the list holds tens of thousands of small buffers (a
 * forwarded gossip message is two); past about 16,000 V8 moves the whole array on every shift,
 * and each frame of up to 256 KiB dropped hundreds: 1.1 s of the main thread in bench:gossip's
 * 2 slots (its driver peers share the machine and read behind). This makes `consume` drop the
 * whole buffers it covers with one splice, and otherwise do what the library's does.
 */
export function consumeWholeBuffersAtOnce(): void {
  const proto = Uint8ArrayList.prototype as ByteList & {[patched]?: true};
  if (proto[patched]) return;
  proto.consume = function (this: ByteList, count: number): void {
    let bytes = Math.trunc(count);
    if (Number.isNaN(bytes) || bytes <= 0) return;
    let whole = 0;
    while (whole < this.bufs.length && bytes >= this.bufs[whole].byteLength) {
      bytes -= this.bufs[whole].byteLength;
      this.length -= this.bufs[whole].byteLength;
      whole++;
    }
    if (whole === this.bufs.length) this.bufs = [];
    else if (whole > 0) this.bufs.splice(0, whole);
    if (bytes > 0 && this.bufs.length > 0) {
      this.bufs[0] = this.bufs[0].subarray(bytes);
      this.length -= bytes;
    }
  };
  proto[patched] = true;
}
