// The load generator's HTTP/1.1 client (bench/loadGenerator.ts): requests encoded once, before the
// load, written as they are onto keep-alive TCP connections, one request at a time on each (no
// pipelining, as a validator client's HTTP library does), and answers read by a parser that
// counts their body bytes and keeps only the status and the start of an error's body. node:http's
// client parses every header into objects and allocates a response stream per request; here a
// request costs a socket write and a scan of its answer.
import {type Socket, connect} from "node:net";

export interface RawAnswer {
  /** the HTTP status, or 0 when there was no answer (connection error, or none within the timeout) */
  status: number;
  /** body bytes, after chunked decoding */
  bytes: number;
  /** of an answer other than 2xx, the start of its body; of a failed request, the error */
  message?: string;
}

const CRLF_CRLF = Buffer.from("\r\n\r\n");
const MESSAGE_BYTES = 200;

/** `method path` as HTTP/1.1 bytes, with a JSON body when there is one. */
export function encodeRequest(host: string, r: {method: string; path: string; body?: string}): string {
  const body = r.body ?? "";
  const bodyHeaders = body ? `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` : "";
  return `${r.method} ${r.path} HTTP/1.1\r\nhost: ${host}\r\n${bodyHeaders}\r\n${body}`;
}

/**
 * One answer read off a connection: fed the bytes as they come, it says when the answer is
 * complete (by content-length, chunked encoding, or the connection's close when it has neither).
 */
export class AnswerReader {
  status = 0;
  bytes = 0;
  keepAlive = true;
  private head: Buffer | null = Buffer.alloc(0);
  /** body bytes still to come: of the whole body (content-length) or of the current chunk; -1: until the connection closes */
  private remaining = 0;
  private chunked: "size" | "data" | "data end" | "trailer" | null = null;
  /** chunked: the line being read (a chunk's size, the CRLF after its data, or a trailer) */
  private line = "";
  private message = "";

  /** Feeds `data`; true once the answer is complete. Throws on a malformed answer. */
  feed(data: Buffer): boolean {
    if (this.head !== null) {
      const head = this.head.length === 0 ? data : Buffer.concat([this.head, data]);
      const end = head.indexOf(CRLF_CRLF);
      if (end < 0) {
        if (head.length > 64 * 1024) throw new Error("answer headers over 64 KiB");
        this.head = head;
        return false;
      }
      this.readHead(head.toString("latin1", 0, end));
      this.head = null;
      data = head.subarray(end + 4);
      if (this.chunked === null && this.remaining === 0) return finished(data);
    }
    return this.chunked !== null ? this.feedChunked(data) : this.feedBody(data);
  }

  /** The connection closed: true when that completes the answer (a body that runs to the close). */
  closed(): boolean {
    return this.head === null && this.chunked === null && this.remaining === -1;
  }

  answer(): RawAnswer {
    return {status: this.status, bytes: this.bytes, message: this.message || undefined};
  }

  private readHead(text: string): void {
    const lines = text.split("\r\n");
    const statusLine = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0]);
    if (!statusLine) throw new Error(`not an HTTP answer: ${lines[0].slice(0, 40)}`);
    this.status = Number(statusLine[1]);
    let length: number | undefined;
    let chunked = false;
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(":");
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim().toLowerCase();
      if (name === "content-length") length = Number(value);
      else if (name === "transfer-encoding") chunked = value.includes("chunked");
      else if (name === "connection") this.keepAlive = value !== "close";
    }
    if (this.status === 204 || this.status === 304 || this.status < 200) this.remaining = 0;
    else if (chunked) this.chunked = "size";
    else if (length !== undefined && Number.isSafeInteger(length) && length >= 0) this.remaining = length;
    else {
      this.remaining = -1;
      this.keepAlive = false;
    }
  }

  private take(body: Buffer): void {
    this.bytes += body.length;
    if ((this.status < 200 || this.status > 299) && this.message.length < MESSAGE_BYTES) this.message += body.toString("utf8", 0, MESSAGE_BYTES - this.message.length);
  }

  private feedBody(data: Buffer): boolean {
    if (this.remaining === -1) {
      this.take(data);
      return false;
    }
    const part = data.subarray(0, this.remaining);
    this.take(part);
    this.remaining -= part.length;
    return this.remaining === 0 ? finished(data.subarray(part.length)) : false;
  }

  private feedChunked(data: Buffer): boolean {
    let at = 0;
    while (at < data.length) {
      if (this.chunked === "data") {
        const part = data.subarray(at, at + this.remaining);
        this.take(part);
        this.remaining -= part.length;
        at += part.length;
        if (this.remaining === 0) this.chunked = "data end";
        continue;
      }
      const lineEnd = data.indexOf(10, at);
      this.line += data.toString("latin1", at, lineEnd < 0 ? data.length : lineEnd);
      if (lineEnd < 0) return false;
      at = lineEnd + 1;
      const line = this.line.trim();
      this.line = "";
      if (this.chunked === "data end") {
        if (line !== "") throw new Error("a chunk's data not followed by CRLF");
        this.chunked = "size";
      } else if (this.chunked === "trailer") {
        if (line === "") return finished(data.subarray(at));
      } else {
        const hex = line.split(";")[0].trim();
        const size = /^[0-9a-f]{1,12}$/i.test(hex) ? parseInt(hex, 16) : NaN;
        if (Number.isNaN(size)) throw new Error(`bad chunk size ${line.slice(0, 20)}`);
        if (size === 0) this.chunked = "trailer";
        else {
          this.remaining = size;
          this.chunked = "data";
        }
      }
    }
    return false;
  }
}

/** An answer ends where its bytes end: nothing was pipelined behind it. */
function finished(rest: Buffer): boolean {
  if (rest.length > 0) throw new Error("bytes after the answer (nothing was pipelined)");
  return true;
}

interface InFlight {
  reader: AnswerReader;
  startedMs: number;
  resolve: (answer: RawAnswer) => void;
}

/**
 * Keep-alive connections to one server, at most `maxSockets`: a request goes on the connection
 * used last that is free (as node:http's agent does), a new one while under the maximum, or
 * waits for one. `send` never rejects: a failure is status 0.
 */
export class ConnectionPool {
  private readonly idle: Socket[] = [];
  private readonly inFlight = new Map<Socket, InFlight>();
  private readonly waiting: {request: Buffer; resolve: (answer: RawAnswer) => void}[] = [];
  private open = 0;
  private readonly sweep: NodeJS.Timeout;
  private readonly host: string;
  private readonly port: number;
  private readonly maxSockets: number;

  constructor(host: string, port: number, maxSockets: number, timeoutMs: number) {
    this.host = host;
    this.port = port;
    this.maxSockets = maxSockets;
    // one timer for every request's timeout, not one each
    this.sweep = setInterval(() => {
      const now = performance.now();
      for (const [socket, flight] of this.inFlight) if (now - flight.startedMs > timeoutMs) socket.destroy(new Error("timeout"));
    }, 250);
  }

  send(request: Buffer): Promise<RawAnswer> {
    return new Promise((resolve) => {
      const socket = this.idle.pop();
      if (socket) this.start(socket, request, resolve);
      else if (this.open < this.maxSockets) this.connect(request, resolve);
      else this.waiting.push({request, resolve});
    });
  }

  close(): void {
    clearInterval(this.sweep);
    for (const socket of this.idle) socket.destroy();
    for (const socket of this.inFlight.keys()) socket.destroy();
  }

  private connect(request: Buffer, resolve: (answer: RawAnswer) => void): void {
    this.open++;
    const socket = connect({host: this.host, port: this.port, noDelay: true});
    socket.on("data", (data: Buffer) => this.onData(socket, data));
    socket.on("error", () => {});
    socket.on("close", () => this.onClose(socket));
    this.start(socket, request, resolve);
  }

  private start(socket: Socket, request: Buffer, resolve: (answer: RawAnswer) => void): void {
    this.inFlight.set(socket, {reader: new AnswerReader(), startedMs: performance.now(), resolve});
    socket.write(request);
  }

  private onData(socket: Socket, data: Buffer): void {
    const flight = this.inFlight.get(socket);
    if (!flight) return void socket.destroy();
    let complete: boolean;
    try {
      complete = flight.reader.feed(data);
    } catch (e) {
      return void socket.destroy(e as Error);
    }
    if (!complete) return;
    this.inFlight.delete(socket);
    flight.resolve(flight.reader.answer());
    if (!flight.reader.keepAlive) socket.destroy();
    else this.release(socket);
  }

  private onClose(socket: Socket): void {
    this.open--;
    const at = this.idle.indexOf(socket);
    if (at >= 0) this.idle.splice(at, 1);
    const flight = this.inFlight.get(socket);
    if (flight) {
      this.inFlight.delete(socket);
      const error = (socket as Socket & {errored?: Error | null}).errored;
      flight.resolve(flight.reader.closed() ? flight.reader.answer() : {status: 0, bytes: flight.reader.bytes, message: error?.message ?? "connection closed before the answer"});
    }
    // a request that waited for a connection gets a new one
    const next = this.waiting.shift();
    if (next) this.connect(next.request, next.resolve);
  }

  private release(socket: Socket): void {
    const next = this.waiting.shift();
    if (next) this.start(socket, next.request, next.resolve);
    else this.idle.push(socket);
  }
}
