import type {ServerResponse} from "node:http";
import {getLogger} from "../../log.ts";

const log = getLogger("api");

/** Resolves once the socket takes more (drain) or is gone (close). */
function drainOrClose(res: ServerResponse): Promise<void> {
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
 * Writes a body given in pieces (HTTP chunked encoding), each piece as it is produced, waiting
 * for the socket to drain so no more than about one piece is held in memory. Stops when the
 * client goes away; an error once the status is sent can only cut the answer short.
 */
export async function writeChunks(res: ServerResponse, chunks: Iterable<string>): Promise<void> {
  try {
    for (const chunk of chunks) {
      if (res.destroyed) return;
      if (!res.write(chunk)) await drainOrClose(res);
    }
    res.end();
  } catch (err) {
    log.error({err}, "Error while writing a streamed response");
    if (res.headersSent) {
      res.destroy(err as Error);
    } else {
      res.statusCode = 500;
      res.end(JSON.stringify({code: 500, message: "Internal server error"}));
    }
  }
}
