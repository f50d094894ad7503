import type {IncomingMessage, ServerResponse} from "node:http";
import {MEDIA_TYPE} from "../wire.ts";

/**
 * Reads a request body, up to `limit` bytes. A body over the limit is answered with 413 at once,
 * from its Content-Length when it has one, and the connection is closed: the rest of the body is
 * not read (draining it first would let a client make the node read 200 MB it will refuse),
 * beyond a short lingering close (see lingerThenClose).
 * Resolves to the body (undefined when there is none), or to null once it has answered 413 or
 * the client has gone.
 */
export function readBody(req: IncomingMessage, res: ServerResponse, limit: number): Promise<Uint8Array | undefined | null> {
  if (tooLargeDeclared(req, limit)) {
    refuseTooLarge(req, res, limit);
    return Promise.resolve(null);
  }
  if (!hasBody(req)) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        req.off("data", onData).off("end", onEnd);
        refuseTooLarge(req, res, limit);
        return resolve(null);
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
      // a plain Uint8Array view, as the in-process transport passes (SSZ values then hold no Buffers)
      resolve(new Uint8Array(body.buffer, body.byteOffset, body.byteLength));
    };
    req.on("data", onData).on("end", onEnd).on("error", () => {
      req.socket.destroy();
      resolve(null);
    });
  });
}

/** Whether the request says it carries a body (a length above 0, or chunked). */
export function hasBody(req: IncomingMessage): boolean {
  const declared = req.headers["content-length"];
  return (declared !== undefined && declared !== "0") || req.headers["transfer-encoding"] !== undefined;
}

/** Whether the request's Content-Length is over `limit`. */
export function tooLargeDeclared(req: IncomingMessage, limit: number): boolean {
  return Number(req.headers["content-length"] ?? 0) > limit;
}

/** 413, and the connection closed once it is sent. */
export function refuseTooLarge(req: IncomingMessage, res: ServerResponse, limit: number): void {
  if (res.headersSent) return;
  lingerThenClose(req);
  res.writeHead(413, {"Content-Type": MEDIA_TYPE.json, Connection: "close"});
  res.end(JSON.stringify({code: 413, message: `Request body over ${limit} bytes`}));
}

/** How long, and how many more body bytes, a refused request's connection is read before it is closed. */
export const LINGER = {ms: 1000, bytes: 1024 * 1024};

/**
 * A lingering close, as nginx's: after the answer, the connection is half-closed and kept for a
 * moment before the socket is destroyed; up to `LINGER.bytes` of what the client still sends is
 * read and dropped, then reading stops. Destroyed at once, with the client's bytes unread, the
 * socket would send a TCP reset, and a client still writing its body would lose the answer it
 * has not read yet (its kernel drops it on the reset).
 */
function lingerThenClose(req: IncomingMessage): void {
  const socket = req.socket;
  // node:http ends a `Connection: close` answer with destroySoon(), which destroys the socket as
  // soon as the answer is flushed: here it only half-closes, and the timer below destroys it
  socket.destroySoon = () => socket.end();
  const timer = setTimeout(() => socket.destroy(), LINGER.ms);
  socket.once("close", () => clearTimeout(timer));
  let dropped = 0;
  req.removeAllListeners("data");
  req.on("data", (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > LINGER.bytes) req.pause();
  });
  req.resume();
}

/** "20mb", "512kb", or a number of bytes. */
export function byteSize(size: number | string): number {
  if (typeof size === "number") return size;
  const match = /^(\d+)\s*(b|kb|mb|gb)?$/i.exec(size.trim());
  if (!match) throw new Error(`Invalid size: ${size}`);
  const unit = {b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3}[(match[2] ?? "b").toLowerCase() as "b"];
  return Number(match[1]) * unit;
}
