import {spawn, type ChildProcess} from "node:child_process";
import {appendFileSync, mkdirSync, mkdtempSync, rmSync} from "node:fs";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {fileURLToPath} from "node:url";
import {type LogLine, REST_LISTENING, readLogLines} from "../serverProcess.ts";

const BIN = fileURLToPath(new URL("../../bin/beacon-gateway.js", import.meta.url));

/**
 * A test node's network stays on loopback, on a port the system picks, without discovery:
 * test files run in parallel and must never meet on the default port 9000.
 */
export const TEST_NETWORK_ARGS = ["--listen-address", "127.0.0.1", "--tcp-port", "0", "--no-discovery"];

/** `node` with REST on a port the system picks, on `dataDir`, then `extra`. */
export function restNodeArgs(dataDir: string, extra: string[] = []): string[] {
  return ["node", "--rest", "--rest-port", "0", "--data-dir", dataDir, ...extra];
}

function withTestNetwork(args: string[]): string[] {
  return args[0] === "node" && !args.includes("--tcp-port") ? [...args, ...TEST_NETWORK_ARGS] : args;
}

export type {LogLine};

/**
 * A beacon-gateway process started from the command line, as a user would, with JSON logs
 * captured so tests can wait for what it reports.
 */
export class NodeProcess {
  readonly logs: LogLine[] = [];
  readonly stderr: string[] = [];
  readonly proc: ChildProcess;
  private waiters: Array<() => void> = [];
  readonly exited: Promise<{code: number | null; signal: NodeJS.Signals | null}>;

  /**
   * `isolated`: the process runs in a network namespace of its own whose only interface is
   * loopback (`unshare -n`, as root), so that nothing it sends can leave the machine (a node
   * that dials a public network's bootnodes gets "network unreachable").
   * `mountNamespaceOf`: the process runs in the mount namespace of that pid (`nsenter -m`, as
   * root), where a test mounted a small filesystem.
   */
  constructor(args: string[], env: Record<string, string> = {}, opts: {isolated?: boolean; mountNamespaceOf?: number} = {}) {
    const argv = [BIN, ...withTestNetwork(args), "--log-format", "json"];
    const [command, commandArgs] = opts.isolated
      ? ["unshare", ["--net", "--", "sh", "-c", 'ip link set lo up && exec "$0" "$@"', process.execPath, ...argv]]
      : opts.mountNamespaceOf !== undefined
        ? ["nsenter", ["-t", String(opts.mountNamespaceOf), "-m", "--", process.execPath, ...argv]]
        : [process.execPath, argv];
    this.proc = spawn(command, commandArgs, {
      env: {...process.env, ...env},
      stdio: ["ignore", "pipe", "pipe"],
    });
    // E2E_LOG_DIR keeps every node's log lines in a file of its own, to read after a failed run
    const logFile = process.env.E2E_LOG_DIR ? join(process.env.E2E_LOG_DIR, `node-${this.proc.pid}.log`) : null;
    if (process.env.E2E_LOG_DIR) mkdirSync(process.env.E2E_LOG_DIR, {recursive: true});
    if (logFile) this.proc.stdout!.on("data", (chunk: Buffer) => appendFileSync(logFile, chunk));
    readLogLines(this.proc.stdout!, (line) => {
      this.logs.push(line);
      for (const wake of this.waiters.splice(0)) wake();
    });
    this.proc.stderr!.on("data", (chunk: Buffer) => this.stderr.push(chunk.toString()));
    this.exited = new Promise((resolve) => this.proc.on("exit", (code, signal) => {
      for (const wake of this.waiters.splice(0)) wake();
      resolve({code, signal});
    }));
  }

  /** Resolves with the first log line (past or future) that matches; rejects on timeout or exit. */
  async waitForLog(match: (line: LogLine) => boolean, timeoutMs: number, what = "log line"): Promise<LogLine> {
    const deadline = Date.now() + timeoutMs;
    let seen = 0;
    for (;;) {
      for (; seen < this.logs.length; seen++) if (match(this.logs[seen])) return this.logs[seen];
      if (this.proc.exitCode !== null || this.proc.signalCode !== null) {
        throw new Error(`node exited (${this.proc.exitCode ?? this.proc.signalCode}) before ${what}; stderr: ${this.stderr.join("").slice(-2000)}`);
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        // the node's own account of what it was doing: its last info-or-above lines (debug lines would crowd them out)
        const told = this.logs.filter((l) => Number(l.level) >= 30).slice(-15);
        throw new Error(`timed out waiting for ${what}; last lines: ${JSON.stringify(told)}`);
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** The REST port the node reported once it listens. */
  async restUrl(timeoutMs = 60_000): Promise<string> {
    const line = await this.waitForLog((l) => l.msg === REST_LISTENING, timeoutMs, "REST API to listen");
    return `http://127.0.0.1:${line.port}`;
  }

  async stop(signal: NodeJS.Signals = "SIGTERM"): Promise<{code: number | null; signal: NodeJS.Signals | null}> {
    if (this.proc.exitCode === null && this.proc.signalCode === null) this.proc.kill(signal);
    return this.exited;
  }
}

export async function getJson<T = any>(base: string, path: string): Promise<{status: number; body: T}> {
  const res = await fetch(base + path);
  const text = await res.text();
  return {status: res.status, body: text ? JSON.parse(text) : undefined};
}

/** Polls `probe` (every 500 ms: it asks a live process over HTTP) until it gives a value. */
export async function waitFor<T>(what: string, timeoutMs: number, probe: () => Promise<T | null>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => null);
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** The node's own p2p address, as it lists it in its identity. */
export async function p2pAddress(url: string): Promise<string> {
  const {body} = await getJson(url, "/eth/v1/node/identity");
  const address = (body.data.p2p_addresses as string[]).find((a) => a.startsWith("/ip4/127.0.0.1/tcp/"));
  if (!address) throw new Error(`no loopback p2p address in ${JSON.stringify(body.data.p2p_addresses)}`);
  return address;
}

/** What a node's REST API says of its chain: genesis, head and finalized checkpoint. */
export async function chainView(url: string) {
  const genesis = await getJson(url, "/eth/v1/beacon/genesis");
  const head = await getJson(url, "/eth/v1/beacon/headers/head");
  const fc = await getJson(url, "/eth/v1/beacon/states/head/finality_checkpoints");
  return {
    genesisTime: genesis.body.data.genesis_time as string,
    genesisValidatorsRoot: genesis.body.data.genesis_validators_root as string,
    headSlot: Number(head.body.data.header.message.slot),
    headRoot: head.body.data.root as string,
    justified: fc.body.data.current_justified as {epoch: string; root: string},
    finalized: fc.body.data.finalized as {epoch: string; root: string},
  };
}

export function tempDataDir(name: string): {dir: string; remove(): void} {
  const dir = mkdtempSync(join(tmpdir(), `bg-${name}-`));
  return {dir, remove: () => rmSync(dir, {recursive: true, force: true})};
}
