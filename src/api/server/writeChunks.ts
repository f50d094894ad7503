import type {ServerResponse} from "node:http";
import {getLogger} from "../../log.ts";
import type {JsonPiece} from "../wire.ts";

const log = getLogger("api");

/** Read at each answer (tests lower it). */
export const bufferLimits = {
  /**
   * Bytes of a body given in pieces that are gathered and sent whole, with `Content-Length`, as
   * mainstream servers send ordinary answers (some clients refuse a chunked body). Only answers
   * larger than this (whole states, long validator lists) go out in chunks as they are produced.
   */
  maxBufferedBytes: 1024 * 1024,
};

/** Resolves once the socket takes more (drain) or is gone (close). */
export function drainOrClose(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
}

/**
 * Writes a body given in pieces. Up to `bufferLimits.maxBufferedBytes` the pieces are gathered and
 * sent as one body with `Content-Length`; past it, the pieces gathered so far and every later one
 * are written as produced (HTTP chunked encoding), waiting for the socket to drain so that past
 * the first MiB no more than about one piece is held in memory. Stops when the client goes away. An error while gathering is
 * a 500; once chunks are out it can only cut the answer short.
 */
export async function writeChunks(res: ServerResponse, chunks: Iterable<JsonPiece>): Promise<void> {
  const limit = bufferLimits.maxBufferedBytes;
  try {
    const pieces = chunks[Symbol.iterator]();
    const gathered: JsonPiece[] = [];
    let bytes = 0;
    for (;;) {
      const next = pieces.next();
      if (next.done) {
        // written piece by piece in this turn, they leave in one writev with the head (node:http
        // corks the socket until the next tick): joined, the answer would be copied once more
        res.setHeader("Content-Length", bytes);
        for (const piece of gathered) res.write(piece);
        res.end();
        return;
      }
      gathered.push(next.value);
      bytes += typeof next.value === "string" ? Buffer.byteLength(next.value) : next.value.byteLength;
      if (bytes > limit) break;
    }
    for (const chunk of gathered) {
      if (res.destroyed) return;
      if (!res.write(chunk)) await drainOrClose(res);
    }
    for (let next = pieces.next(); !next.done; next = pieces.next()) {
      if (res.destroyed) return;
      if (!res.write(next.value)) await drainOrClose(res);
    }
    res.end();
  } catch (err) {
    log.error({err}, "Error while writing a streamed response");
    if (res.headersSent) {
      res.destroy(err as Error);
    } else {
      res.statusCode = 500;
      res.setHeader("Content-Type", "application/json");
      res.end(JSON.stringify({code: 500, message: "Internal server error"}));
    }
  }
}
