// A subprocess of `bench/buffering.ts`: serves two JSON bodies, read from files, the way the REST
// server sends an answer produced in pieces (writeChunks over 16 KiB pieces), with the buffer
// limit given on the command line. Paths: /small, /large. Prints {msg: "listening", port}.
import {readFileSync} from "node:fs";
import {createServer} from "node:http";
import {bufferLimits, writeChunks} from "../src/api/server/writeChunks.ts";
import {CHUNK_CHARS} from "../src/api/streaming.ts";

const [limit, smallFile, largeFile] = process.argv.slice(2);
bufferLimits.maxBufferedBytes = Number(limit);
const pieces = (text: string): string[] => Array.from({length: Math.ceil(text.length / CHUNK_CHARS)}, (_, i) => text.slice(i * CHUNK_CHARS, (i + 1) * CHUNK_CHARS));
const bodies: Record<string, string[]> = {"/small": pieces(readFileSync(smallFile, "utf8")), "/large": pieces(readFileSync(largeFile, "utf8"))};

const server = createServer((req, res) => {
  res.setHeader("Content-Type", "application/json");
  void writeChunks(res, bodies[req.url ?? ""] ?? []);
});
server.listen(0, "127.0.0.1", () => console.log(JSON.stringify({msg: "listening", port: (server.address() as {port: number}).port})));
