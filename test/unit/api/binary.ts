import type request from "supertest";

type Parser = Parameters<request.Test["parse"]>[0];

/** A supertest parser that keeps the response body as raw bytes (SSZ answers). */
export const collectBytes: Parser = (res, cb) => {
  const chunks: Buffer[] = [];
  res.on("data", (c: Buffer) => chunks.push(c));
  res.on("end", () => cb(null, Buffer.concat(chunks)));
};

/** The request with its response body read as raw bytes. */
export function binary(req: request.Test): request.Test {
  return req.buffer(true).parse(collectBytes);
}
