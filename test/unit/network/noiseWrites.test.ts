import {describe, expect, it} from "@jest/globals";
import {gatherNoiseWritesPerTurn} from "../../../src/network/noiseWrites.ts";

// the library's secured connection, made as libp2p makes it (the class itself is not exported)
const noiseUtilsUrl = new URL("./utils.js", import.meta.resolve("@chainsafe/libp2p-noise")).href;
const {toMessageStream} = (await import(noiseUtilsUrl)) as {toMessageStream(connection: unknown, handshake: unknown): SecuredConnection};

interface SecuredConnection {
  send(data: Uint8Array): boolean;
  close(): Promise<void>;
}

const silent = Object.assign(() => {}, {trace() {}, error() {}, enabled: false});

/** The socket side: what the secured connection writes, and whether it says it can take more. */
class Socket extends EventTarget {
  readonly log = silent;
  readonly writes: Uint8Array[] = [];
  closedAfterWrites = -1;
  full = false;
  send(data: Uint8Array | {subarray(): Uint8Array}): boolean {
    this.writes.push(data instanceof Uint8Array ? data : data.subarray());
    return !this.full;
  }
  async close(): Promise<void> {
    this.closedAfterWrites = this.writes.length;
  }
}

// an identity "cipher" with a 16-byte tag, so the noise messages can be read back
const TAG = new Uint8Array(16).fill(0xee);
const handshake = {
  encrypt: (plaintext: Uint8Array | {subarray(): Uint8Array}) => {
    const bytes = plaintext instanceof Uint8Array ? plaintext : plaintext.subarray();
    const out = new Uint8Array(bytes.length + TAG.length);
    out.set(bytes);
    out.set(TAG, bytes.length);
    return out;
  },
  decrypt: (ciphertext: Uint8Array) => ciphertext.subarray(0, ciphertext.length - TAG.length),
};

/** The noise messages in the bytes written: each a 2-byte length, then a ciphertext with its tag. */
function noiseMessages(written: Uint8Array[]): Uint8Array[] {
  const all = Buffer.concat(written);
  const messages: Uint8Array[] = [];
  for (let at = 0; at < all.length; ) {
    const length = all.readUInt16BE(at);
    const ciphertext = all.subarray(at + 2, at + 2 + length);
    expect(ciphertext.subarray(-16)).toEqual(Buffer.from(TAG));
    messages.push(ciphertext.subarray(0, -16));
    at += 2 + length;
  }
  return messages;
}

const frames = (count: number, size: (i: number) => number) => Array.from({length: count}, (_, i) => Uint8Array.from({length: size(i)}, (_, j) => (i * 7 + j) & 0xff));
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe("a secured (noise) connection's writes, gathered per turn of the event loop", () => {
  gatherNoiseWritesPerTurn();

  it("sends the frames given in one turn at its end, as one noise message in one socket write, bytes and order kept", async () => {
    const socket = new Socket();
    const connection = toMessageStream(socket, handshake);
    const sent = frames(300, (i) => 12 + (i % 50));
    for (const frame of sent) expect(connection.send(frame)).toBe(true);
    expect(socket.writes).toHaveLength(0);
    await nextTurn();
    expect(socket.writes).toHaveLength(1);
    const messages = noiseMessages(socket.writes);
    expect(messages).toHaveLength(1);
    expect(Buffer.from(messages[0])).toEqual(Buffer.concat(sent));
  });

  it("splits what exceeds a noise message's 65,519 bytes of plaintext into full messages, still one socket write", async () => {
    const socket = new Socket();
    const connection = toMessageStream(socket, handshake);
    const sent = frames(40, () => 4000);
    for (const frame of sent) connection.send(frame);
    await nextTurn();
    expect(socket.writes).toHaveLength(1);
    const messages = noiseMessages(socket.writes);
    expect(messages.map((m) => m.length)).toEqual([65_519, 65_519, 160_000 - 2 * 65_519]);
    expect(Buffer.concat(messages)).toEqual(Buffer.concat(sent));
  });

  it("keeps each turn's frames apart and in order across turns", async () => {
    const socket = new Socket();
    const connection = toMessageStream(socket, handshake);
    const first = frames(5, () => 30);
    const second = frames(3, () => 20);
    for (const frame of first) connection.send(frame);
    await nextTurn();
    for (const frame of second) connection.send(frame);
    await nextTurn();
    expect(socket.writes).toHaveLength(2);
    expect(noiseMessages(socket.writes).map((m) => Buffer.from(m))).toEqual([Buffer.concat(first), Buffer.concat(second)]);
  });

  it("once the socket is full, answers false (the muxer pauses) until it drains, and loses nothing", async () => {
    const socket = new Socket();
    const connection = toMessageStream(socket, handshake);
    socket.full = true;
    const sent = frames(10, () => 100);
    connection.send(sent[0]);
    await nextTurn();
    expect(socket.writes).toHaveLength(1);
    // the socket said it is full: what follows waits, and the writer is told to stop
    expect(connection.send(sent[1])).toBe(false);
    for (const frame of sent.slice(2)) connection.send(frame);
    expect(socket.writes).toHaveLength(1);
    socket.full = false;
    socket.dispatchEvent(new Event("drain"));
    await nextTurn();
    expect(Buffer.concat(noiseMessages(socket.writes))).toEqual(Buffer.concat(sent));
    expect(connection.send(frames(1, () => 8)[0])).toBe(true);
  });

  it("sends what it gathered before the socket is closed", async () => {
    const socket = new Socket();
    const connection = toMessageStream(socket, handshake);
    const sent = frames(4, () => 64);
    for (const frame of sent) connection.send(frame);
    await connection.close();
    expect(socket.closedAfterWrites).toBe(1);
    expect(Buffer.concat(noiseMessages(socket.writes))).toEqual(Buffer.concat(sent));
    await nextTurn();
    expect(socket.writes).toHaveLength(1);
  });
});
