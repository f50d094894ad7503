import {readFileSync} from "node:fs";
import {fileURLToPath} from "node:url";
import {routes} from "../src/api/routes/index.ts";
import type {Route} from "../src/api/routes/types.ts";
import {legacyMethods} from "../compat/methods.ts";
import {NodeProcess, tempDataDir} from "../test/e2e/nodeProcess.ts";
import {prng} from "./seededRandom.ts";

/**
 * `npm run fuzz`: a seeded stream of bad requests against a real dev node process, to every
 * route of the route table and to the JSON-RPC server: odd path values, queries, headers, content
 * types, bodies (random bytes, truncated and oversized SSZ, truncated and deep JSON, huge arrays).
 * Client mistakes must never get a 5xx (the documented 501s of declined routes excepted) and
 * the node must never die. Reports requests, 5xx, crashes, timeouts and the largest RSS growth.
 *
 *   FUZZ_REQUESTS (default 100000), FUZZ_SEED (default 1), FUZZ_CONCURRENCY (default 8)
 */

export interface FuzzReport {
  seed: number;
  requests: number;
  byStatus: Record<string, number>;
  serverErrors: number;
  /** the first few 5xx answers (not 501): what was sent and what came back */
  serverErrorSamples: string[];
  crashed: boolean;
  /** requests whose connection the server closed without an answer: a refusal (an oversized header, say), not a failure */
  connectionErrorSamples: string[];
  /** requests with no answer within the per-request timeout (a held event stream is cut on purpose, not counted) */
  timeouts: number;
  rssStartMb: number;
  rssMaxGrowthMb: number;
  seconds: number;
}

interface FuzzRequest {
  rpc: boolean;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Uint8Array;
}

class Generator {
  readonly rand: () => number;
  private readonly routeList = Object.values(routes as Record<string, Route>);
  private readonly rpcNames = [...legacyMethods.keys()];
  constructor(seed: number) {
    this.rand = prng(seed);
  }
  int(n: number): number {
    return Math.floor(this.rand() * n);
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)];
  }
  bytes(n: number): Uint8Array {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) out[i] = this.int(256);
    return out;
  }

  value(): string {
    return this.pick([
      () => "head",
      () => "genesis",
      () => "finalized",
      () => String(this.int(1000)),
      () => "18446744073709551616",
      () => "-1",
      () => "0x" + "ab".repeat(this.pick([1, 31, 32, 33, 48, 96])),
      () => "0xzz",
      () => "",
      () => "%00%ff%fe",
      () => "..%2F..%2Fetc%2Fpasswd",
      () => "%F0%9F%98%80%00%ED%A0%80",
      () => "a".repeat(this.pick([100, 4000, 20000])),
      () => Array.from({length: this.pick([65, 1000, 3000])}, (_, i) => i).join(","),
      () => Buffer.from(this.bytes(8)).toString("hex"),
      () => "1e3",
      () => "NaN",
    ])();
  }

  json(): string {
    return this.pick([
      () => "[".repeat(this.pick([100, 10_000, 100_000])),
      () => "[".repeat(5000) + "]".repeat(5000),
      () => '{"a":'.repeat(3000) + "1" + "}".repeat(3000),
      () => JSON.stringify(Array.from({length: this.pick([1000, 100_000])}, (_, i) => String(i))),
      () => JSON.stringify(Array.from({length: this.pick([10, 1000])}, () => ({validator_index: this.value(), slot: this.value(), data: {}}))),
      () => JSON.stringify({data: this.value(), message: {slot: this.value()}, signature: "0x" + "00".repeat(96)}),
      () => '{"slot": "1", "proposer_index": ',
      () => "null",
      () => '"' + "x".repeat(100_000) + '"',
      () => JSON.stringify([{}]),
      () => "\u0000\u0001 not json",
    ])();
  }

  body(): Uint8Array | undefined {
    return this.pick([
      () => undefined,
      () => new TextEncoder().encode(this.json()),
      () => this.bytes(this.pick([0, 1, 3, 100, 4096, 70_000])),
      () => this.bytes(this.pick([1, 3, 7])).subarray(0, 2),
      () => new Uint8Array(this.pick([1024 * 1024, 2 * 1024 * 1024])),
    ])();
  }

  headers(): Record<string, string> {
    const h: Record<string, string> = {};
    if (this.rand() < 0.7) h["content-type"] = this.pick(["application/json", "application/octet-stream", "text/plain", "application/x-www-form-urlencoded", "application/json; charset=latin1", "multipart/form-data", "*/*", "garbage;;;="]);
    if (this.rand() < 0.5) h.accept = this.pick(["application/json", "application/octet-stream", "text/event-stream", "text/html", "application/octet-stream;q=2", "*/*;q=0", "x".repeat(4000)]);
    if (this.rand() < 0.3) h["eth-consensus-version"] = this.pick(["phase0", "fulu", "electra", "nope", ""]);
    return h;
  }

  restRequest(): FuzzRequest {
    const route = this.pick(this.routeList);
    const path = route.path.replace(/\{(\w+)\}/g, () => encodeURIComponent(this.value()).replace(/%25/g, "%"));
    const queries: string[] = [];
    for (let i = this.int(4); i > 0; i--) queries.push(`${this.pick(["id", "status", "topics", "slot", "epoch", "indices", "x", "%zz"])}=${this.value()}`);
    const method = this.rand() < 0.9 ? route.method : this.pick(["GET", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"]);
    const body = method === "GET" || method === "OPTIONS" ? undefined : this.body();
    return {rpc: false, method, path: path + (queries.length ? "?" + queries.join("&") : ""), headers: this.headers(), body};
  }

  rpcCall(small = false): unknown {
    if (small) return {jsonrpc: "2.0", id: this.int(1000), method: this.pick(this.rpcNames), params: this.pick([[], ["head"], [String(this.int(100))], ["head", ["1", "2"]]])};
    const params = this.pick([
      () => undefined,
      () => [],
      () => [this.value()],
      () => [this.value(), Array.from({length: this.pick([10, 70, 5000])}, () => this.value())],
      () => JSON.parse(this.pick(['{"a":1}', "[null]", '[{"slot": "x"}]', "[1e400]", "[18446744073709551616]"])),
      () => this.value(),
    ])();
    return {jsonrpc: this.rand() < 0.9 ? "2.0" : "1.0", id: this.pick([1, "a", null, {}, undefined]), method: this.rand() < 0.9 ? this.pick(this.rpcNames) : this.value(), params};
  }

  rpcRequest(): FuzzRequest {
    const text = this.pick([
      () => JSON.stringify(this.rpcCall()),
      () => JSON.stringify(Array.from({length: this.pick([0, 2, 17, 101, 5000])}, (_, i) => this.rpcCall(i > 16))),
      () => this.json(),
      () => JSON.stringify(this.rpcCall()).slice(0, 20),
    ])();
    const headers = this.rand() < 0.9 ? {"content-type": "application/json"} : this.headers();
    const method = this.rand() < 0.95 ? "POST" : "GET";
    return {rpc: true, method, path: "/", headers, body: method === "GET" ? undefined : new TextEncoder().encode(text)};
  }

  next(): FuzzRequest {
    return this.rand() < 0.8 ? this.restRequest() : this.rpcRequest();
  }
}

function rssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return match ? Number(match[1]) / 1024 : 0;
}

const REQUEST_TIMEOUT_MS = 15_000;

export interface FuzzOptions {
  requests: number;
  seed: number;
  concurrency?: number;
  log?: (line: string) => void;
  /** ends the campaign early when it returns true (checked before each request) */
  stop?: () => boolean;
}

/** A running node to fuzz: its REST and JSON-RPC base URLs, its process id and its exit. */
export interface FuzzTarget {
  rest: string;
  rpc: string;
  pid: number;
  exited: Promise<unknown>;
}

/** Starts a dev node with REST and JSON-RPC, as `npm run fuzz` and `npm run bench:abuse` fuzz it. */
export async function startFuzzTarget(extraArgs: string[] = []): Promise<{node: NodeProcess; target: FuzzTarget; remove: () => void}> {
  const data = tempDataDir("fuzz");
  const node = new NodeProcess(["node", "--rest", "--rest-port", "0", "--rpc", "--rpc-port", "0", "--data-dir", data.dir, "--seconds-per-slot", "2", "--validators", "64", ...extraArgs]);
  const rest = await node.restUrl();
  const rpcLine = await node.waitForLog((l) => l.msg === "JSON-RPC listening", 30_000, "JSON-RPC to listen");
  return {node, target: {rest, rpc: `http://127.0.0.1:${rpcLine.port}`, pid: node.proc.pid!, exited: node.exited}, remove: () => data.remove()};
}

/** Runs a campaign against a fresh dev node process. */
export async function runFuzz(opts: FuzzOptions): Promise<FuzzReport> {
  const {node, target, remove} = await startFuzzTarget();
  try {
    return await fuzz(target, opts);
  } finally {
    await node.stop();
    remove();
  }
}

/** Runs a campaign against a running node. */
export async function fuzz({rest, rpc, pid, exited}: FuzzTarget, opts: FuzzOptions): Promise<FuzzReport> {
  const started = Date.now();
  const report: FuzzReport = {seed: opts.seed, requests: 0, byStatus: {}, serverErrors: 0, serverErrorSamples: [], crashed: false, connectionErrorSamples: [], timeouts: 0, rssStartMb: rssMb(pid), rssMaxGrowthMb: 0, seconds: 0};
  const gen = new Generator(opts.seed);
  let issued = 0;
  const one = async (): Promise<void> => {
    const req = gen.next();
    const url = (req.rpc ? rpc : rest) + req.path;
    let status: string;
    try {
      const res = await fetch(url, {method: req.method, headers: req.headers, body: req.body as Uint8Array<ArrayBuffer> | undefined, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS)});
      status = String(res.status);
      // an event stream that was opened stays open: the answer's status is what is checked
      await (res.headers.get("content-type")?.startsWith("text/event-stream") ? res.body?.cancel() : res.arrayBuffer());
      if (res.status >= 500 && res.status !== 501) {
        report.serverErrors++;
        if (report.serverErrorSamples.length < 10) report.serverErrorSamples.push(`${res.status} ${req.method} ${url.slice(0, 200)} ${JSON.stringify(req.headers).slice(0, 200)} body ${req.body?.length ?? 0} B`);
      }
    } catch (e) {
      const name = (e as Error).name;
      status = name === "TimeoutError" ? "timeout" : "connection-error";
      if (status === "timeout") report.timeouts++;
      else if (report.connectionErrorSamples.length < 5) report.connectionErrorSamples.push(`${(e as Error).cause ?? e} ${req.method} ${url.slice(0, 120)} ${JSON.stringify(req.headers).slice(0, 120)} body ${req.body?.length ?? 0} B`);
    }
    report.byStatus[status] = (report.byStatus[status] ?? 0) + 1;
    report.requests++;
  };
  const worker = async (): Promise<void> => {
    while (issued < opts.requests && !report.crashed && !opts.stop?.()) {
      issued++;
      await one();
      if (report.requests % 1000 === 0) {
        report.rssMaxGrowthMb = Math.max(report.rssMaxGrowthMb, rssMb(pid) - report.rssStartMb);
        opts.log?.(`${report.requests} requests, ${report.serverErrors} 5xx, RSS +${report.rssMaxGrowthMb.toFixed(0)} MB`);
      }
    }
  };
  let finished = false;
  const died = exited.then(() => {
    if (!finished) report.crashed = true;
  });
  await Promise.race([Promise.all(Array.from({length: opts.concurrency ?? 8}, worker)), died]);
  finished = true;
  if (!report.crashed) report.rssMaxGrowthMb = Math.max(report.rssMaxGrowthMb, rssMb(pid) - report.rssStartMb);
  report.seconds = (Date.now() - started) / 1000;
  return report;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const requests = Number(process.env.FUZZ_REQUESTS ?? 100_000);
  const seed = Number(process.env.FUZZ_SEED ?? 1);
  const report = await runFuzz({requests, seed, concurrency: Number(process.env.FUZZ_CONCURRENCY ?? 8), log: (line) => console.log(line)});
  console.log(JSON.stringify(report, null, 2));
  process.exit(report.serverErrors === 0 && !report.crashed ? 0 : 1);
}
