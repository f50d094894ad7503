import {describe, expect, it} from "@jest/globals";
// another copy of the library (2.x), left as it is: what `consume` must do
import {Uint8ArrayList as ReferenceList} from "uint8arraylist";
import {consumeWholeBuffersAtOnce} from "../../../src/network/sendQueueConsume.ts";
import {establishedYamuxStream} from "./establishedYamuxStream.ts";

/** A yamux stream's send queue: the list whose `consume` the node changes. */
function sendQueue(): {append(b: Uint8Array): void; consume(n: number): void; byteLength: number; subarray(): Uint8Array; bufs: Uint8Array[]} {
  const stream = establishedYamuxStream("outbound", () => true);
  return (stream as unknown as {writeBuffer: ReturnType<typeof sendQueue>}).writeBuffer;
}

describe("the send queue of libp2p's streams, its front dropped a frame's worth at a time", () => {
  consumeWholeBuffersAtOnce();

  it("is the list whose consume is changed: whole buffers dropped with one splice, not one shift each", () => {
    const queue = sendQueue();
    for (let i = 0; i < 40_000; i++) queue.append(new Uint8Array([i & 0xff, (i >> 8) & 0xff]));
    const bufs = queue.bufs;
    const shifts: number[] = [];
    const shift = bufs.shift.bind(bufs);
    bufs.shift = () => (shifts.push(1), shift());
    queue.consume(64 * 1024);
    expect(shifts.length).toBe(0);
    expect(queue.byteLength).toBe(80_000 - 64 * 1024);
    expect(queue.subarray().subarray(0, 2)).toEqual(new Uint8Array([(32 * 1024) & 0xff, ((32 * 1024) >> 8) & 0xff]));
  });

  it("leaves the same bytes as the library's own consume, over random appends and consumes", () => {
    let seed = 7;
    const random = (n: number) => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31), seed % n);
    const queue = sendQueue();
    const reference = new ReferenceList();
    for (let step = 0; step < 3000; step++) {
      if (random(3) > 0) {
        const bytes = Uint8Array.from({length: random(40)}, () => random(256));
        queue.append(bytes);
        reference.append(bytes);
      } else {
        // sometimes more than it holds, zero, or a fraction
        const n = random(5) === 0 ? reference.byteLength + random(10) : random(200) + (random(4) === 0 ? 0.5 : 0);
        queue.consume(n);
        reference.consume(n);
      }
      expect(queue.byteLength).toBe(reference.byteLength);
    }
    expect(queue.subarray()).toEqual(reference.subarray());
    queue.consume(queue.byteLength);
    expect(queue.byteLength).toBe(0);
    expect(queue.bufs).toEqual([]);
  });
});
