import {describe, expect, it} from "@jest/globals";
import {createServer as createHttpServer} from "node:http";
import {type AddressInfo, type Server, type Socket, createServer as createTcpServer} from "node:net";
import {AnswerReader, ConnectionPool, encodeRequest} from "../../../bench/rawHttp.ts";

/** Feeds `text` to a reader in pieces of `size` bytes; the piece that completed it, or -1. */
function feedInPieces(reader: AnswerReader, text: string, size: number): number {
  const bytes = Buffer.from(text, "latin1");
  for (let at = 0, piece = 0; at < bytes.length; at += size, piece++) {
    if (reader.feed(bytes.subarray(at, at + size))) return at + size >= bytes.length ? piece : -2;
  }
  return -1;
}

async function listen(server: Server | ReturnType<typeof createHttpServer>): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

describe("the load generator's answer reader", () => {
  const chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n1;ext=1\r\n!\r\n0\r\nX-Trailer: t\r\n\r\n";

  it("reads a body by content-length, and a chunked one, however the bytes are split", () => {
    for (const size of [1, 2, 3, 7, 1000]) {
      const byLength = new AnswerReader();
      expect(feedInPieces(byLength, "HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n{\"data\":\"x\"}", size)).toBeGreaterThanOrEqual(0);
      expect(byLength.answer()).toEqual({status: 200, bytes: 12, message: undefined});
      expect(byLength.keepAlive).toBe(true);

      const byChunks = new AnswerReader();
      expect(feedInPieces(byChunks, chunked, size)).toBeGreaterThanOrEqual(0);
      expect(byChunks.answer()).toEqual({status: 200, bytes: 6, message: undefined});
    }
  });

  it("keeps the start of an error's body, reads bodiless answers and a body that runs to the close", () => {
    const notFound = new AnswerReader();
    const message = JSON.stringify({code: 404, message: "x".repeat(300)});
    expect(notFound.feed(Buffer.from(`HTTP/1.1 404 Not Found\r\ncontent-length: ${message.length}\r\nconnection: close\r\n\r\n${message}`))).toBe(true);
    expect(notFound.answer()).toEqual({status: 404, bytes: message.length, message: message.slice(0, 200)});
    expect(notFound.keepAlive).toBe(false);

    expect(new AnswerReader().feed(Buffer.from("HTTP/1.1 204 No Content\r\n\r\n"))).toBe(true);

    const toClose = new AnswerReader();
    expect(toClose.feed(Buffer.from("HTTP/1.0 200 OK\r\n\r\nabc"))).toBe(false);
    expect(toClose.closed()).toBe(true);
    expect(toClose.answer().bytes).toBe(3);
    // a connection that closes in the middle of a sized body did not complete its answer
    const cut = new AnswerReader();
    cut.feed(Buffer.from("HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc"));
    expect(cut.closed()).toBe(false);
  });

  it("rejects what is not an HTTP answer, a bad chunk size, and bytes after the answer", () => {
    expect(() => new AnswerReader().feed(Buffer.from("SSH-2.0-OpenSSH\r\n\r\n"))).toThrow("not an HTTP answer");
    expect(() => new AnswerReader().feed(Buffer.from("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n"))).toThrow("bad chunk size");
    expect(() => new AnswerReader().feed(Buffer.from("HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\nab"))).toThrow("bytes after the answer");
  });
});

describe("the load generator's connection pool", () => {
  it("sends encoded requests over keep-alive connections to node:http and reads what it answers", async () => {
    const connections = new Set<Socket>();
    const seen: string[] = [];
    const server = createHttpServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c));
      req.on("end", () => {
        seen.push(`${req.method} ${req.url} ${req.headers["content-type"] ?? ""} ${body}`);
        if (req.url === "/stream") {
          res.write("a".repeat(1000));
          res.end("b".repeat(500));
        } else res.writeHead(req.url === "/missing" ? 404 : 200, {"content-type": "application/json"}).end(req.url === "/missing" ? '{"code":404,"message":"no"}' : "{}");
      });
    });
    server.on("connection", (socket) => connections.add(socket));
    const port = await listen(server);
    const pool = new ConnectionPool("127.0.0.1", port, 4, 5000);
    try {
      const send = (r: {method: "GET" | "POST"; path: string; body?: string}) => pool.send(Buffer.from(encodeRequest(`127.0.0.1:${port}`, r)));
      expect(await send({method: "GET", path: "/stream"})).toEqual({status: 200, bytes: 1500, message: undefined});
      expect(await send({method: "POST", path: "/eth/v1/validator/duties/attester/1", body: '["1","2"]'})).toEqual({status: 200, bytes: 2, message: undefined});
      expect(await send({method: "GET", path: "/missing"})).toEqual({status: 404, bytes: 27, message: '{"code":404,"message":"no"}'});
      // one after another: one connection, kept alive
      expect(connections.size).toBe(1);
      expect(seen[1]).toBe('POST /eth/v1/validator/duties/attester/1 application/json ["1","2"]');
      // ten at once over at most four connections
      const answers = await Promise.all(Array.from({length: 10}, () => send({method: "GET", path: "/"})));
      expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
      expect(connections.size).toBe(4);
    } finally {
      pool.close();
      server.close();
    }
  });

  it("gives status 0 and the error for a refused connection, a connection cut mid-answer, and a server that never answers", async () => {
    const cutting = createTcpServer((socket) => socket.once("data", () => socket.end("HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc")));
    const silent = createTcpServer(() => {});
    const [cutPort, silentPort] = [await listen(cutting), await listen(silent)];
    const request = Buffer.from(encodeRequest("x", {method: "GET", path: "/"}));
    const pools = [new ConnectionPool("127.0.0.1", cutPort, 2, 5000), new ConnectionPool("127.0.0.1", silentPort, 2, 300)];
    try {
      const cut = await pools[0].send(request);
      expect(cut).toMatchObject({status: 0, bytes: 3});
      const timedOut = await pools[1].send(request);
      expect(timedOut).toEqual({status: 0, bytes: 0, message: "timeout"});
      const closedServer = createTcpServer();
      const port = await listen(closedServer);
      await new Promise((resolve) => closedServer.close(resolve));
      const refused = new ConnectionPool("127.0.0.1", port, 2, 5000);
      expect(await refused.send(request)).toMatchObject({status: 0, message: expect.stringContaining("ECONNREFUSED")});
      refused.close();
    } finally {
      for (const pool of pools) pool.close();
      cutting.close();
      silent.close();
    }
  });
});
