import type {Stream} from "@libp2p/interface";
import {ByteSource} from "../../../src/network/reqresp/byteSource.ts";

/**
 * Reading a libp2p stream to its end through the node's ByteSource, not the stream's async
 * iterator: @libp2p/utils 7.4.1's iterator waits for a 'remoteCloseWrite' or 'close' event, so
 * when the remote's data and its close both arrived before the loop started (a fast echo on a
 * loaded machine), it yields the data and then waits forever.
 */
export async function readToEnd(stream: Stream): Promise<number[]> {
  const source = new ByteSource(stream);
  while (await source.fill());
  return [...source.buffer.subarray()];
}

/** A protocol handler that sends back what it receives, then closes its side. */
export async function echoHandler(stream: Stream): Promise<void> {
  stream.send(Uint8Array.from(await readToEnd(stream)));
  await stream.close();
}
