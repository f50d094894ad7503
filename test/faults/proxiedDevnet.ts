import {generateKeyPair} from "@libp2p/crypto/keys";
import {peerIdFromPrivateKey} from "@libp2p/peer-id";
import {mkdirSync, writeFileSync} from "node:fs";
import {createServer} from "node:net";
import {join} from "node:path";
import {NodeProcess, tempDataDir} from "../e2e/nodeProcess.ts";
import {restJson} from "./chainChecks.ts";
import {LoopbackProxy, type CutMode} from "./loopbackProxy.ts";

/**
 * A devnet of node processes whose every peer link crosses a LoopbackProxy the test controls.
 * Node j dials node i (i < j) only through the proxy of link i-j (`--direct-peer` with the
 * proxy's port and node i's peer id); discovery is off, so nothing else dials. Each node's key
 * and TCP port are chosen before it starts, so the proxies are made first and all nodes start
 * at once, each making the same interop genesis.
 */

export interface ProxiedDevnetOptions {
  nodes: number;
  validators: number;
  secondsPerSlot: number;
  /** seconds from now to genesis; the nodes must be up and peered by then */
  genesisDelaySeconds: number;
  /** extra arguments of node `index` (after the common ones) */
  extraArgs?: (index: number) => string[];
  /** extra environment of node `index` (NODE_OPTIONS=--cpu-prof, for one) */
  extraEnv?: (index: number) => Record<string, string>;
}

export interface ProxiedNode {
  index: number;
  process: NodeProcess;
  url: string;
  peerId: string;
}

/** A TCP port free on loopback now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as {port: number}).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The interop indices node `i` of `n` runs: contiguous, equal shares. */
export function shareOf(i: number, n: number, validators: number): string {
  const per = Math.floor(validators / n);
  return `${i * per}..${i === n - 1 ? validators - 1 : (i + 1) * per - 1}`;
}

export class ProxiedDevnet {
  readonly nodes: ProxiedNode[] = [];
  /** link "i-j" (i < j): the proxy node j dials node i through */
  private readonly links = new Map<string, LoopbackProxy>();
  private readonly data = tempDataDir("proxied-devnet");

  readonly opts: ProxiedDevnetOptions;

  private constructor(opts: ProxiedDevnetOptions) {
    this.opts = opts;
  }

  static async start(opts: ProxiedDevnetOptions): Promise<ProxiedDevnet> {
    const devnet = new ProxiedDevnet(opts);
    try {
      await devnet.launch();
    } catch (e) {
      await devnet.stop();
      throw e;
    }
    return devnet;
  }

  link(a: number, b: number): LoopbackProxy {
    const proxy = this.links.get(a < b ? `${a}-${b}` : `${b}-${a}`);
    if (!proxy) throw new Error(`no link ${a}-${b}`);
    return proxy;
  }

  /** Every link between a node of `side` and a node outside it. */
  linksAcross(side: number[]): LoopbackProxy[] {
    const inSide = new Set(side);
    const out: LoopbackProxy[] = [];
    for (let a = 0; a < this.opts.nodes; a++) for (let b = a + 1; b < this.opts.nodes; b++) if (inSide.has(a) !== inSide.has(b)) out.push(this.link(a, b));
    return out;
  }

  /** Cuts the network between `side` and the other nodes. */
  cut(side: number[], mode: CutMode = "refuse"): void {
    for (const proxy of this.linksAcross(side)) proxy.cutLink(mode);
  }

  healAll(): void {
    for (const proxy of this.links.values()) proxy.heal();
  }

  private async launch(): Promise<void> {
    const {nodes: n, validators, secondsPerSlot} = this.opts;
    const keys = await Promise.all(Array.from({length: n}, () => generateKeyPair("secp256k1")));
    const peerIds = keys.map((key) => peerIdFromPrivateKey(key).toString());
    const ports: number[] = [];
    for (let i = 0; i < n; i++) ports.push(await freePort());
    for (let a = 0; a < n; a++) for (let b = a + 1; b < n; b++) this.links.set(`${a}-${b}`, await LoopbackProxy.start({port: ports[a]}));

    const genesisTime = Math.floor(Date.now() / 1000) + this.opts.genesisDelaySeconds;
    // every node makes the same interop genesis from the validator count and genesis time, so all start at once
    const chain = ["--validators", String(validators), "--genesis-time", String(genesisTime)];
    for (let i = 0; i < n; i++) {
      const dir = join(this.data.dir, `node-${i}`);
      // the node's key, written where it looks for it, so its peer id is known before it starts
      mkdirSync(join(dir, "network"), {recursive: true, mode: 0o700});
      writeFileSync(join(dir, "network", "node.key"), Buffer.from(keys[i].raw).toString("hex") + "\n", {mode: 0o600});
      const peers = Array.from({length: i}, (_, a) => ["--direct-peer", `/ip4/127.0.0.1/tcp/${this.link(a, i).port}/p2p/${peerIds[a]}`]).flat();
      const args = [
        "node", "--rest", "--rest-port", "0", "--data-dir", dir,
        "--listen-address", "127.0.0.1", "--tcp-port", String(ports[i]), "--no-quic", "--no-discovery",
        "--seconds-per-slot", String(secondsPerSlot),
        ...chain, "--dev-validators", shareOf(i, n, validators),
        ...peers, ...(this.opts.extraArgs?.(i) ?? []),
      ];
      this.nodes.push({index: i, process: new NodeProcess(args, this.opts.extraEnv?.(i) ?? {}), url: "", peerId: peerIds[i]});
    }
    await Promise.all(this.nodes.map(async (node) => (node.url = await node.process.restUrl(120_000))));
    const genesisRoots = await Promise.all(this.nodes.map(async (node) => (await restJson(node.url, "/eth/v1/beacon/headers/genesis")).data.root as string));
    if (new Set(genesisRoots).size !== 1) throw new Error(`the nodes made different genesis blocks: ${genesisRoots.join(", ")}`);
  }

  /** The connected peers of each node. */
  async peerCounts(): Promise<number[]> {
    return Promise.all(this.nodes.map(async (node) => Number((await restJson(node.url, "/eth/v1/node/peer_count")).data.connected)));
  }

  /** Kills the nodes; those given an environment of their own (a profiler's) are asked to exit, so it can write. */
  async stop(): Promise<void> {
    const polite = (i: number) => Object.keys(this.opts.extraEnv?.(i) ?? {}).length > 0;
    await Promise.all(
      this.nodes.map(async (node) => {
        if (!polite(node.index)) return node.process.stop("SIGKILL");
        const timer = setTimeout(() => node.process.proc.kill("SIGKILL"), 20_000);
        await node.process.stop("SIGTERM");
        clearTimeout(timer);
      })
    );
    await Promise.all([...this.links.values()].map((proxy) => proxy.close()));
    this.data.remove();
  }
}
