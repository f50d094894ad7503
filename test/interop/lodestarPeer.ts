import {spawn, type ChildProcess} from "node:child_process";
import {createHash} from "node:crypto";
import {chmodSync, cpSync, existsSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync} from "node:fs";
import {createServer} from "node:net";
import {delimiter, dirname, join} from "node:path";
import {fileURLToPath} from "node:url";

/**
 * The independent peer of the interop tests: Lodestar 1.5.1 from ../shared/peers/lodestar-1.5.1
 * (see its README), installed once into node_modules/.cache/lodestar-peer and run with the
 * machine's Node 20, for which its native addons are built.
 */

export const SYSTEM_NODE = "/usr/bin/node";
export const PEER_SOURCE = fileURLToPath(new URL("../../../shared/peers/lodestar-1.5.1", import.meta.url));
export const PEER_DIR = fileURLToPath(new URL("../../node_modules/.cache/lodestar-peer", import.meta.url));
/** written last by a finished install: the fingerprint of the sources it was made from */
const INSTALL_MARKER = ".install-complete";
const FINGERPRINTED = ["package.json", "package-lock.json", "start.mjs", "build-native.mjs"];
const OUTPUT_LINES_KEPT = 200;

/** The environment for Node 20 and its npm: no Node 24 from node_modules/.bin first in PATH, no settings of the outer `npm test`. */
function peerEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (key.startsWith("npm_") || key === "NODE_OPTIONS" || key === "LOG_LEVEL" || key === "LODESTAR_PRESET") continue;
    env[key] = value;
  }
  const path = (process.env.PATH ?? "").split(delimiter).filter((p) => p && !p.includes("node_modules"));
  env.PATH = [dirname(SYSTEM_NODE), ...path].join(delimiter);
  return {...env, ...extra};
}

function fingerprint(): string {
  const hash = createHash("sha256");
  for (const file of FINGERPRINTED) hash.update(file).update(readFileSync(join(PEER_SOURCE, file)));
  return hash.digest("hex");
}

/** The sources are read-only (shared/): the copy must be writable for npm. */
function makeWritable(path: string): void {
  const stat = statSync(path);
  chmodSync(path, stat.mode | 0o200);
  if (stat.isDirectory()) for (const entry of readdirSync(path)) makeWritable(join(path, entry));
}

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {cwd, env, stdio: ["ignore", "pipe", "pipe"]});
    const output: string[] = [];
    child.stdout!.on("data", (c: Buffer) => output.push(c.toString()));
    child.stderr!.on("data", (c: Buffer) => output.push(c.toString()));
    child.on("error", reject);
    child.on("exit", (code) => {
      if (code === 0) resolve();
      else reject(new Error(`${command} ${args.join(" ")} in ${cwd} exited with ${code}:\n${output.join("").slice(-4000)}`));
    });
  });
}

/**
 * Installs the peer into the cache unless a complete install of the same sources is there.
 * Fails with a message naming what is missing when Node 20 or the shared sources are not there.
 */
export async function installLodestarPeer(): Promise<string> {
  if (!existsSync(SYSTEM_NODE)) {
    throw new Error(`the Lodestar interop peer needs Node 20 at ${SYSTEM_NODE} (its native addons are built for it), and it is not there`);
  }
  if (!existsSync(join(PEER_SOURCE, "start.mjs"))) {
    throw new Error(`the Lodestar interop peer's sources are not at ${PEER_SOURCE} (../shared/peers/lodestar-1.5.1 from the project)`);
  }
  const wanted = fingerprint();
  const marker = join(PEER_DIR, INSTALL_MARKER);
  if (existsSync(marker) && readFileSync(marker, "utf8") === wanted) return PEER_DIR;
  rmSync(PEER_DIR, {recursive: true, force: true});
  cpSync(PEER_SOURCE, PEER_DIR, {recursive: true});
  makeWritable(PEER_DIR);
  // its `npm run setup` step by step: npm would put our node_modules/.bin (Node 24) first on the
  // scripts' PATH, as the cache lies inside it; npm's own entry point is run by Node 20
  const npmCli = realpathSync(join(dirname(SYSTEM_NODE), "npm"));
  await run(SYSTEM_NODE, [npmCli, "ci", "--ignore-scripts"], PEER_DIR, peerEnv());
  await run(SYSTEM_NODE, ["build-native.mjs"], PEER_DIR, peerEnv());
  writeFileSync(marker, wanted);
  return PEER_DIR;
}

/** A free TCP port on loopback (Lodestar's start.mjs takes fixed ports). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const {port} = server.address() as {port: number};
      server.close(() => resolve(port));
    });
  });
}

export interface LodestarOptions {
  restPort: number;
  p2pPort: number;
  dataDir: string;
  /** more of start.mjs's environment: FOLLOW, START_VALIDATORS, SECONDS_PER_SLOT, GENESIS_DELAY, ... */
  env?: Record<string, string>;
}

/** A Lodestar beacon node started with the peer's start.mjs, its output kept for failure messages. */
export class LodestarProcess {
  readonly restUrl: string;
  readonly p2pPort: number;
  readonly proc: ChildProcess;
  readonly exited: Promise<number | null>;
  private readonly lines: string[] = [];

  constructor(opts: LodestarOptions) {
    this.restUrl = `http://127.0.0.1:${opts.restPort}`;
    this.p2pPort = opts.p2pPort;
    const env = peerEnv({
      REST_PORT: String(opts.restPort),
      REST_ADDRESS: "127.0.0.1",
      P2P_PORT: String(opts.p2pPort),
      DATA_DIR: opts.dataDir,
      LOG_LEVEL: "info",
      ...opts.env,
    });
    this.proc = spawn(SYSTEM_NODE, ["start.mjs"], {cwd: PEER_DIR, env, stdio: ["ignore", "pipe", "pipe"]});
    const keep = (chunk: Buffer) => {
      this.lines.push(...chunk.toString().split("\n").filter(Boolean));
      if (this.lines.length > OUTPUT_LINES_KEPT) this.lines.splice(0, this.lines.length - OUTPUT_LINES_KEPT);
    };
    this.proc.stdout!.on("data", keep);
    this.proc.stderr!.on("data", keep);
    this.exited = new Promise((resolve) => this.proc.on("exit", (code) => resolve(code)));
  }

  /** Rejects when the process exits: race it against a wait so that a crash fails fast. */
  crashed(): Promise<never> {
    const crash = this.exited.then((code): never => {
      throw new Error(`Lodestar exited (${code}); its last output:\n${this.output()}`);
    });
    crash.catch(() => undefined); // an exit after the race (at stop) is no failure
    return crash;
  }

  output(lines = 40): string {
    return this.lines.slice(-lines).join("\n");
  }

  async stop(): Promise<void> {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return;
    this.proc.kill("SIGTERM");
    const killer = setTimeout(() => this.proc.kill("SIGKILL"), 10_000);
    await this.exited;
    clearTimeout(killer);
  }
}
