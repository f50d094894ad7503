import type {IncomingMessage, ServerResponse} from "node:http";
import {MEDIA_TYPE} from "../wire.ts";

/**
 * Reads a request body, up to `limit` bytes. A body over the limit is answered with 413 at once,
 * from its Content-Length when it has one, and the connection is closed: the rest of the body is
 * never read (draining it first would let a client make the node read 200 MB it will refuse).
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
  req.pause();
  if (res.headersSent) return;
  res.writeHead(413, {"Content-Type": MEDIA_TYPE.json, Connection: "close"});
  res.end(JSON.stringify({code: 413, message: `Request body over ${limit} bytes`}), () => req.socket.destroy());
}

/** "20mb", "512kb", or a number of bytes. */
export function byteSize(size: number | string): number {
  if (typeof size === "number") return size;
  const match = /^(\d+)\s*(b|kb|mb|gb)?$/i.exec(size.trim());
  if (!match) throw new Error(`Invalid size: ${size}`);
  const unit = {b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3}[(match[2] ?? "b").toLowerCase() as "b"];
  return Number(match[1]) * unit;
}
