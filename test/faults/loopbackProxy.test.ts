import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import {createConnection, createServer, type Server, type Socket} from "node:net";
import {LoopbackProxy} from "./loopbackProxy.ts";

/** The proxy against a real echo server over real sockets: what crosses, what a cut does to each side. */

let echo: Server;
let echoPort: number;

beforeAll(async () => {
  echo = createServer((socket) => {
    socket.on("error", () => undefined);
    socket.pipe(socket);
  });
  await new Promise<void>((resolve) => echo.listen(0, "127.0.0.1", resolve));
  echoPort = (echo.address() as {port: number}).port;
});
afterAll(() => new Promise<void>((resolve) => echo.close(() => resolve())));

function connect(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({host: "127.0.0.1", port}, () => resolve(socket));
    socket.once("error", reject);
  });
}

/** Everything the socket receives within `ms`, and whether it was closed. */
function receive(socket: Socket, ms: number): Promise<{text: string; closed: boolean}> {
  return new Promise((resolve) => {
    let text = "";
    let closed = socket.destroyed;
    const onData = (b: Buffer) => (text += b.toString());
    const onClose = () => (closed = true);
    socket.on("data", onData);
    socket.on("close", onClose);
    socket.on("error", () => undefined);
    setTimeout(() => {
      socket.off("data", onData);
      socket.off("close", onClose);
      resolve({text, closed});
    }, ms);
  });
}

describe("loopback proxy", () => {
  it("forwards both ways; a refused cut resets open connections and turns new ones away; heal lets them in again", async () => {
    const proxy = await LoopbackProxy.start({port: echoPort});
    try {
      const socket = await connect(proxy.port);
      socket.write("hello");
      expect(await receive(socket, 200)).toEqual({text: "hello", closed: false});
      expect(proxy.connections).toBe(1);

      proxy.cutLink("refuse");
      expect(proxy.state).toBe("refuse");
      expect((await receive(socket, 200)).closed).toBe(true);
      // the kernel may complete the handshake before the proxy resets it: either way nothing gets through
      const turnedAway = createConnection({host: "127.0.0.1", port: proxy.port});
      turnedAway.on("error", () => undefined);
      turnedAway.write("anyone?");
      expect(await receive(turnedAway, 300)).toEqual({text: "", closed: true});

      proxy.heal();
      const again = await connect(proxy.port);
      again.write("back");
      expect(await receive(again, 200)).toEqual({text: "back", closed: false});
      again.destroy();
    } finally {
      await proxy.close();
    }
  });

  it("a stalled cut holds the bytes of open and new connections and delivers them when it heals", async () => {
    const proxy = await LoopbackProxy.start({port: echoPort});
    try {
      const open = await connect(proxy.port);
      open.write("a");
      expect((await receive(open, 200)).text).toBe("a");

      proxy.cutLink("stall");
      open.write("held");
      const late = await connect(proxy.port);
      late.write("waiting");
      const [whileCut, lateWhileCut] = await Promise.all([receive(open, 300), receive(late, 300)]);
      expect(whileCut).toEqual({text: "", closed: false});
      expect(lateWhileCut).toEqual({text: "", closed: false});

      proxy.heal();
      const [after, lateAfter] = await Promise.all([receive(open, 300), receive(late, 300)]);
      expect(after).toEqual({text: "held", closed: false});
      expect(lateAfter).toEqual({text: "waiting", closed: false});
      open.destroy();
      late.destroy();
    } finally {
      await proxy.close();
    }
  });
});
