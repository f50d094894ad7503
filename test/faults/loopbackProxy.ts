import {createConnection, createServer, type Server, type Socket} from "node:net";

/**
 * A TCP proxy on loopback that a test can cut: it listens on 127.0.0.1 (a port the system
 * picks) and forwards every connection to `target`. Two ways to cut it, as a network fails:
 *
 * - `"refuse"`: every open connection is reset and new ones are closed as soon as they arrive
 *   (a host gone, a firewall that rejects): both ends see the connection fail at once.
 * - `"stall"`: nothing crosses any more, in either direction, and new connections hang
 *   unanswered (a cable pulled, packets dropped): the bytes already sent wait, as TCP keeps
 *   them, and arrive if the proxy heals before either end gives up on the connection.
 *
 * `heal()` lets everything through again. Nothing here is specific to libp2p.
 */

export type CutMode = "refuse" | "stall";

interface Pair {
  client: Socket;
  upstream: Socket | null;
}

export class LoopbackProxy {
  private server: Server | null = null;
  private readonly pairs = new Set<Pair>();
  private cut: CutMode | null = null;
  /** connections accepted so far (counted whether or not they were let through) */
  accepted = 0;

  readonly target: {host: string; port: number};

  private constructor(target: {host: string; port: number}) {
    this.target = target;
  }

  static async start(target: {host?: string; port: number}): Promise<LoopbackProxy> {
    const proxy = new LoopbackProxy({host: target.host ?? "127.0.0.1", port: target.port});
    await proxy.listen();
    return proxy;
  }

  get port(): number {
    const address = this.server?.address();
    if (!address || typeof address === "string") throw new Error("the proxy is not listening");
    return address.port;
  }

  /** what the proxy does now */
  get state(): CutMode | "open" {
    return this.cut ?? "open";
  }

  /** connections open through the proxy now */
  get connections(): number {
    return this.pairs.size;
  }

  private listen(): Promise<void> {
    const server = createServer({pauseOnConnect: true}, (client) => this.accept(client));
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => {
        server.off("error", reject);
        resolve();
      });
    });
  }

  private accept(client: Socket): void {
    this.accepted++;
    client.on("error", () => undefined);
    if (this.cut === "refuse") {
      client.resetAndDestroy();
      return;
    }
    const pair: Pair = {client, upstream: null};
    this.pairs.add(pair);
    client.once("close", () => this.drop(pair));
    // a stalled proxy holds the new connection unanswered until it heals
    if (this.cut === null) this.connect(pair);
  }

  private connect(pair: Pair): void {
    const upstream = createConnection({host: this.target.host, port: this.target.port});
    pair.upstream = upstream;
    upstream.on("error", () => undefined);
    upstream.once("close", () => this.drop(pair));
    upstream.once("connect", () => {
      this.forward(pair.client, upstream);
      this.forward(upstream, pair.client);
      if (this.cut === null) pair.client.resume();
      else upstream.pause();
    });
  }

  /** Bytes from `from` to `to`, with backpressure; a stalled proxy keeps both paused. */
  private forward(from: Socket, to: Socket): void {
    from.on("data", (chunk: Buffer) => {
      if (!to.write(chunk)) from.pause();
    });
    to.on("drain", () => {
      if (this.cut === null) from.resume();
    });
    from.once("end", () => to.end());
  }

  private drop(pair: Pair): void {
    if (!this.pairs.delete(pair)) return;
    pair.client.destroy();
    pair.upstream?.destroy();
  }

  /** Cuts the link: `"refuse"` resets every connection, `"stall"` freezes them. */
  cutLink(mode: CutMode = "refuse"): void {
    this.cut = mode;
    for (const pair of [...this.pairs]) {
      if (mode === "refuse") {
        this.pairs.delete(pair);
        pair.client.resetAndDestroy();
        pair.upstream?.resetAndDestroy();
      } else {
        pair.client.pause();
        pair.upstream?.pause();
      }
    }
  }

  /** Lets everything through again: stalled connections resume, held ones are connected. */
  heal(): void {
    this.cut = null;
    for (const pair of this.pairs) {
      if (pair.upstream === null) this.connect(pair);
      else {
        pair.client.resume();
        pair.upstream.resume();
      }
    }
  }

  async close(): Promise<void> {
    this.cutLink("refuse");
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
