import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import {Uint8ArrayList} from "uint8arraylist";
import type {BeaconLibp2p} from "../../../src/network/libp2p.ts";
import {loopbackHost} from "./loopbackHost.ts";
import {sendYamuxWindowUpdatesAtHalf} from "../../../src/network/yamuxWindow.ts";
import {echoHandler, readToEnd} from "./echoStream.ts";
import {establishedYamuxStream} from "./establishedYamuxStream.ts";

/**
 * Yamux window updates once half the receive window is used (as go-yamux and rust-yamux send
 * them), not one per data frame: a stream fed by a sender that keeps to the window it was given
 * (the yamux spec's 256 KiB to start), and a transfer over real sockets between two hosts.
 */

// the yamux spec's frame types (not exported by @libp2p/yamux)
const DATA = 0;
const WINDOW_UPDATE = 1;
const INITIAL_WINDOW = 256 * 1024;


/** A receiving stream, and a sender on the other side that sends only within the window granted to it. */
function receiver() {
  const pending: number[] = [];
  let updates = 0;
  const stream = establishedYamuxStream("inbound", (header) => {
    if (header.type === WINDOW_UPDATE) pending.push(header.length);
    return true;
  });
  let senderWindow = INITIAL_WINDOW;
  /** sends `size` bytes in frames no larger than the window left (a sender with none left would wait forever) */
  const send = (size: number) => {
    while (size > 0) {
      if (senderWindow === 0) throw new Error("the sender has no window left and no update came");
      const length = Math.min(size, senderWindow);
      senderWindow -= length;
      size -= length;
      stream.handleData({header: {type: DATA, flag: 0, streamID: 1, length}, data: new Uint8ArrayList(new Uint8Array(length))} as never);
      for (const granted of pending.splice(0)) {
        senderWindow += granted;
        updates++;
      }
    }
  };
  return {send, updates: () => updates, senderWindow: () => senderWindow};
}

describe("yamux window updates at half the window", () => {
  beforeAll(() => sendYamuxWindowUpdatesAtHalf());

  it("grants the window back in a few updates for thousands of small messages, the sender never short of window", () => {
    const r = receiver();
    for (let i = 0; i < 5000; i++) {
      r.send(400);
      // the update comes with the message that takes the window below half
      expect(r.senderWindow()).toBeGreaterThan(INITIAL_WINDOW / 2 - 400);
    }
    // 2 MB in 400-byte messages: an update per 128 KiB used (15 or 16), where the library sent 5,000
    expect(r.updates()).toBeGreaterThanOrEqual(15);
    expect(r.updates()).toBeLessThanOrEqual(16);
  });

  it("keeps a sender of frames as large as its window going", () => {
    const r = receiver();
    // each send uses the whole window: the update must come with the frame that empties it
    for (let i = 0; i < 8; i++) r.send(INITIAL_WINDOW);
    expect(r.updates()).toBe(8);
    expect(r.senderWindow()).toBe(INITIAL_WINDOW);
  });
});

describe("yamux between two hosts over loopback", () => {
  const PROTOCOL = "/test/echo/1";
  const hosts: BeaconLibp2p[] = [];
  beforeAll(async () => {
    for (let i = 0; i < 2; i++) {
      const host = await loopbackHost();
      await host.start();
      await host.handle(PROTOCOL, echoHandler, {maxInboundStreams: 64});
      hosts.push(host);
    }
  });
  afterAll(async () => {
    for (const host of hosts) await host.stop();
  });

  it("carries 1 MiB each way, and many small streams at once, byte for byte", async () => {
    const [a, b] = hosts;
    const echo = async (payload: Uint8Array) => {
      const stream = await a.dialProtocol(b.getMultiaddrs(), PROTOCOL, {maxOutboundStreams: 64});
      stream.send(payload);
      await stream.close();
      return Uint8Array.from(await readToEnd(stream));
    };
    await a.dial(b.getMultiaddrs());
    expect(a.getConnections(b.peerId)[0].multiplexer).toBe("/yamux/1.0.0");
    const big = Uint8Array.from({length: 1024 * 1024}, (_, i) => (i * 7) % 251);
    expect(Buffer.from(await echo(big)).equals(Buffer.from(big))).toBe(true);
    const small = Array.from({length: 48}, (_, i) => Uint8Array.from({length: 300 + i}, () => i));
    const answers = await Promise.all(small.map((payload) => echo(payload)));
    for (const [i, answer] of answers.entries()) expect(Buffer.from(answer).equals(Buffer.from(small[i]))).toBe(true);
  }, 30_000);
});
