import type {RequestHandler} from "express";
import {MEDIA_TYPE} from "../wire.ts";

/**
 * Reads a request body into `req.body` (a Buffer), up to `limit` bytes. A body over the limit
 * is answered with 413 at once, from its Content-Length when it has one, and the connection is
 * closed: the rest of the body is never read (body-parser drains it first, which lets a client
 * make the node read 200 MB it will refuse).
 */
export function readBody(limit: number): RequestHandler {
  return (req, res, next) => {
    const tooLarge = (): void => {
      req.pause();
      if (res.headersSent) return;
      res.writeHead(413, {"Content-Type": MEDIA_TYPE.json, Connection: "close"});
      res.end(JSON.stringify({code: 413, message: `Request body over ${limit} bytes`}), () => req.socket.destroy());
    };
    const declared = Number(req.headers["content-length"] ?? 0);
    if (declared > limit) return tooLarge();
    if (declared === 0 && req.headers["transfer-encoding"] === undefined) return next();
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        req.off("data", onData).off("end", onEnd);
        return tooLarge();
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      req.body = Buffer.concat(chunks);
      next();
    };
    req.on("data", onData).on("end", onEnd).on("error", () => req.socket.destroy());
  };
}

/** "20mb", "512kb", or a number of bytes. */
export function byteSize(size: number | string): number {
  if (typeof size === "number") return size;
  const match = /^(\d+)\s*(b|kb|mb|gb)?$/i.exec(size.trim());
  if (!match) throw new Error(`Invalid size: ${size}`);
  const unit = {b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3}[(match[2] ?? "b").toLowerCase() as "b"];
  return Number(match[1]) * unit;
}
