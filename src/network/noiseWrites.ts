/**
 * @chainsafe/libp2p-noise (17.x) encrypts and writes each frame the muxer gives it at once: a
 * gossip message forwarded to a peer is one yamux frame, so one noise message (an encryption)
 * and two socket writes (its length, then its ciphertext), each a system call. A node forwarding
 * every subnet's attestations does that tens of thousands of times a second: in bench:gossip's
 * profile the socket writes alone were 1.9 s of the main thread's 16 s, the encryptions another
 * half second. This gathers what a connection is given in one turn of the event loop and sends
 * it at the turn's end (`process.nextTick`, after the microtasks that forwarded it), encrypted
 * as one noise message per 64 KiB and written to the socket at once, as rust-libp2p's noise
 * output buffers its plaintext until it is flushed or a frame is full. The bytes and their
 * order are what the library would send; only their grouping into noise messages differs,
 * which the receiver does not see.
 *
 * Back pressure is kept: once the socket has said it is full, `send` is the library's again
 * (it answers false, and the muxer pauses its streams until `drain`); a connection closed with
 * gathered bytes sends them first, as the library sends what it holds.
 */

/** the fields of @libp2p/utils' AbstractMessageStream the library keeps to itself */
interface GatheringStream {
  stream: {send(data: Uint8Array): boolean};
  encrypt(plaintext: Uint8Array): {subarray(): Uint8Array};
  writeBuffer: {append(data: unknown): void; byteLength: number};
  writeStatus: string;
  writableNeedsDrain: boolean;
  processSendQueue(): boolean;
  send(data: unknown): boolean;
  sendData(data: ByteList): {sentBytes: number; canSendMore: boolean};
  close(options?: unknown): Promise<void>;
  [sendScheduled]?: boolean;
}

/** uint8arraylist's list (the frames waiting), or one buffer */
type ByteList = Uint8Array | {byteLength: number; subarray(): Uint8Array};

const sendScheduled = Symbol("gatheredSendScheduled");
const patched = Symbol("gatherNoiseWritesPerTurn");

// The class of a secured connection (EncryptedMessageStream) is not exported; its prototype is
// that of what toMessageStream makes, here over a stand-in connection that is never used.
const noiseUtilsUrl = new URL("./utils.js", import.meta.resolve("@chainsafe/libp2p-noise")).href;
const {toMessageStream} = (await import(noiseUtilsUrl)) as {toMessageStream(connection: unknown, handshake: unknown): object};
const silent = Object.assign(() => {}, {trace() {}, error() {}, enabled: false});
const standIn = {log: silent, addEventListener() {}};
const encryptedStreamPrototype = Object.getPrototypeOf(toMessageStream(standIn, {})) as GatheringStream & {[patched]?: true};

function sendGathered(stream: GatheringStream): void {
  stream[sendScheduled] = false;
  try {
    stream.processSendQueue();
  } catch {
    // the library has aborted the connection (and logged why); there is no caller to tell
  }
}

export function gatherNoiseWritesPerTurn(): void {
  const proto = encryptedStreamPrototype;
  if (proto[patched]) return;
  const librarySend = proto.send;
  const libraryClose = proto.close;
  proto.send = function (this: GatheringStream, data: unknown): boolean {
    if (this.writableNeedsDrain || this.writeStatus !== "writable") return librarySend.call(this, data);
    this.writeBuffer.append(data);
    if (!this[sendScheduled]) {
      this[sendScheduled] = true;
      process.nextTick(sendGathered, this);
    }
    return true;
  };
  // The library encrypts a list of buffers buffer by buffer (one cipher update each) into a list
  // the socket is given buffer by buffer (a write each): the frames are made one plaintext first,
  // and the noise messages one buffer (their lengths and ciphertexts), so the socket is written once.
  proto.sendData = function (this: GatheringStream, data: ByteList) {
    const encrypted = this.encrypt(data instanceof Uint8Array ? data : data.subarray());
    return {sentBytes: data.byteLength, canSendMore: this.stream.send(encrypted.subarray())};
  };
  proto.close = function (this: GatheringStream, options?: unknown): Promise<void> {
    if (this.writeBuffer.byteLength > 0 && !this.writableNeedsDrain) sendGathered(this);
    return libraryClose.call(this, options);
  };
  proto[patched] = true;
}
