// The Lodestar 1.5.1 peer (../shared/peers/lodestar-1.5.1, installed with its `npm run setup`),
// started for a side-by-side benchmark on its own dev chain: bellatrix, minimal preset, 4 s slots,
// its validators in-process. It needs Node 20, the machine's /usr/bin/node (see its README).
import {execFileSync, spawn, type ChildProcess} from "node:child_process";
import {openSync, readFileSync} from "node:fs";
import {createServer} from "node:net";
import {join} from "node:path";
import {HOST} from "./harness.ts";

const PEER_NODE = process.env.BENCH_PEER_NODE ?? "/usr/bin/node";

export interface PeerOptions {
  restPort: number;
  p2pPort: number;
  validators: number;
  /** more environment for its start.mjs (ANCHOR_STATE, LODESTAR_PRESET, ...) */
  env?: Record<string, string>;
  /** how long it may take to answer (default 180 s; a large anchor state takes longer) */
  readyTimeoutMs?: number;
}

/** Starts the peer and resolves once its REST API answers; its log goes to `<dir>/bench.log`. */
export async function startPeer(dir: string, opts: PeerOptions): Promise<{proc: ChildProcess; base: string}> {
  const logFile = join(dir, "bench.log");
  const log = openSync(logFile, "w");
  const env = {
    ...process.env,
    FORK: "bellatrix",
    SECONDS_PER_SLOT: "4",
    GENESIS_DELAY: "5",
    LOG_LEVEL: "warn",
    REST_ADDRESS: HOST,
    REST_PORT: String(opts.restPort),
    P2P_PORT: String(opts.p2pPort),
    VALIDATOR_COUNT: String(opts.validators),
    ...opts.env,
  };
  const proc = spawn(PEER_NODE, ["start.mjs"], {cwd: dir, env, stdio: ["ignore", log, log]});
  const base = `http://${HOST}:${opts.restPort}`;
  const deadline = Date.now() + (opts.readyTimeoutMs ?? 180_000);
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`the peer exited (${proc.exitCode}); its log:\n${readFileSync(logFile, "utf8").slice(-2000)}`);
    try {
      if ((await fetch(`${base}/eth/v1/node/version`)).ok) return {proc, base};
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`the peer did not answer on ${base}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Release years of the peer versions benches have run, for the tables' names of the peer. */
const RELEASED: Record<string, number> = {"1.5.1": 2023};

/**
 * The peer as every table names it: the client its own `/eth/v1/node/version` names, the version
 * of its installed `@lodestar/beacon-node` (the node answers "Lodestar/dev" when started from a
 * script, as start.mjs does), its release year, and the Node.js it runs on, e.g.
 * "Lodestar 1.5.1 (2023, Node 20.20.2)".
 */
export async function peerName(base: string, dir: string): Promise<string> {
  const answer = ((await (await fetch(`${base}/eth/v1/node/version`)).json()) as {data: {version: string}}).data.version;
  const client = answer.split("/")[0] || "unknown client";
  const version = (JSON.parse(readFileSync(join(dir, "node_modules/@lodestar/beacon-node/package.json"), "utf8")) as {version: string}).version;
  const node = execFileSync(PEER_NODE, ["--version"], {encoding: "utf8"}).trim().replace(/^v/, "");
  return `${client} ${version} (${RELEASED[version] ? `${RELEASED[version]}, ` : ""}Node ${node})`;
}

/** A TCP port free on loopback now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, HOST, () => {
      const {port} = server.address() as {port: number};
      server.close(() => resolve(port));
    });
    server.on("error", reject);
  });
}

/** A process's resident set size in MiB, from /proc. */
export function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round(kib / 1024);
}
