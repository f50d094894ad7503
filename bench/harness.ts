// Shared by the REST benchmarks (`bench/api.ts`, `bench/buffering.ts`): a server subprocess that
// reports its port, the dev chain's clock, and autocannon runs printed as one table.
import autocannon from "autocannon";
import type {ChildProcess} from "node:child_process";
import {readFileSync} from "node:fs";
import {startListening} from "../test/serverProcess.ts";

export const HOST = "127.0.0.1";
export const DURATION_S = Number(process.env.BENCH_DURATION ?? 5);
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
/**
 * Unmeasured load before each measured run, the same requests: a path the server has not yet run
 * hot is compiled during the first second of load, and its requests then waited on the compiler
 * (27 pairs of 8 s attester-duties rounds on a node started fresh: the first round's p99 was above
 * the second's in 23, by 0.74 ms on average).
 */
export const WARMUP_S = Number(process.env.BENCH_WARMUP ?? 1);

export interface Target {
  name: string;
  /** a function when the path depends on the clock (computed just before the endpoint's run) */
  path: string | (() => string);
  method?: "GET" | "POST";
  body?: string;
  /** request headers beside the body's Content-Type (an Accept for SSZ, say) */
  headers?: Record<string, string>;
}

export interface Measurement {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  /** requests without an answer: connection errors and timeouts */
  failed: number;
  /** answers with a status other than 2xx */
  non2xx: number;
  /** response bytes per second (headers and bodies) */
  bytesPerSecond: number;
  /** the server's CPU time (user and system) per request, in µs, when its process id was given */
  cpuUsPerRequest?: number;
}

/**
 * The bare server: one constant JSON answer, no routing, no framework. \`/?bytes=N\` answers a
 * constant JSON text of N bytes instead: the ceiling for an endpoint whose answers are that large.
 */
export const CEILING_SERVER = `
const http = require("node:http");
const small = JSON.stringify({data: {version: "ceiling"}});
const bySize = new Map();
const bodyOf = (url) => {
  const bytes = Number(/[?&]bytes=(\\d+)/.exec(url)?.[1] ?? 0);
  if (bytes === 0) return small;
  if (!bySize.has(bytes)) bySize.set(bytes, JSON.stringify({data: "x".repeat(Math.max(0, bytes - 11))}));
  return bySize.get(bytes);
};
const server = http.createServer((req, res) => res.writeHead(200, {"Content-Type": "application/json"}).end(bodyOf(req.url)));
server.listen(0, "${HOST}", () => console.log(JSON.stringify({msg: "listening", port: server.address().port})));
`;

/** The benches' dev node's arguments (after the launcher): bellatrix, 4 s slots, `validators` of its own, REST and p2p on loopback. */
export function devNodeArgs(dataDir: string, validators: number): string[] {
  return [
    ...["node", "--rest", "--rest-port", "0", "--rest-address", HOST, "--data-dir", dataDir, "--log-format", "json"],
    ...["--genesis-fork", "bellatrix", "--seconds-per-slot", "4", "--validators", String(validators)],
    ...["--listen-address", HOST, "--tcp-port", "0", "--no-quic", "--no-discovery"],
  ];
}

/** Starts a process and resolves with the port it reports, from a JSON log line whose `msg` matches (test/serverProcess.ts). */
export async function startServer(args: string[], readyMsg: string): Promise<{proc: ChildProcess; port: number}> {
  const {proc, port} = await startListening(args, {ready: readyMsg});
  return {proc, port};
}

export async function stop(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise((resolve) => proc.once("exit", resolve));
  // a server bench:api stopped (SIGSTOP) while another was measured would hold a SIGTERM until continued
  proc.kill("SIGCONT");
  proc.kill("SIGTERM");
  await exited;
}

export async function getData(base: string, path: string): Promise<any> {
  const res = await fetch(base + path);
  if (res.status !== 200) throw new Error(`GET ${path}: HTTP ${res.status}`);
  return ((await res.json()) as {data: any}).data;
}

/** The chain's clock, from the node's own genesis and spec. */
export async function chainClock(base: string): Promise<() => {slot: number; epoch: number}> {
  const [genesis, spec] = await Promise.all([getData(base, "/eth/v1/beacon/genesis"), getData(base, "/eth/v1/config/spec")]);
  const genesisTime = Number(genesis.genesis_time);
  const secondsPerSlot = Number(spec.SECONDS_PER_SLOT);
  const slotsPerEpoch = Number(spec.SLOTS_PER_EPOCH);
  return () => {
    const slot = Math.max(0, Math.floor((Date.now() / 1000 - genesisTime) / secondsPerSlot));
    return {slot, epoch: Math.floor(slot / slotsPerEpoch)};
  };
}

export async function waitForHeadSlot(base: string, minSlot: number): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      if (Number((await getData(base, "/eth/v1/beacon/headers/head")).header.message.slot) >= minSlot) return;
    } catch {
      // not ready yet
    }
    if (Date.now() > deadline) throw new Error(`the dev chain did not reach slot ${minSlot}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** The head's slot of the node at `base`. */
export async function headSlot(base: string): Promise<number> {
  return Number((await getData(base, "/eth/v1/beacon/headers/head")).header.message.slot);
}

/** a process's CPU time (user and system) so far, in µs, from /proc (Linux: 100 ticks a second) */
export function cpuMicros(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/** One run of `target` (after the unmeasured warm-up); with `pid`, the server's CPU per request too. */
export async function measure(base: string, target: Target, pid?: number): Promise<Measurement> {
  const options = {
    url: base + (typeof target.path === "string" ? target.path : target.path()),
    method: target.method ?? "GET",
    body: target.body,
    headers: {...(target.body ? {"content-type": "application/json"} : {}), ...target.headers},
    connections: CONNECTIONS,
  };
  if (WARMUP_S > 0) await autocannon({...options, duration: WARMUP_S});
  const cpuBefore = pid === undefined ? 0 : cpuMicros(pid);
  const result = await autocannon({...options, duration: DURATION_S});
  const cpuUsPerRequest = pid === undefined ? undefined : (cpuMicros(pid) - cpuBefore) / Math.max(1, result.requests.total);
  return {name: target.name, rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, failed: result.errors + result.timeouts, non2xx: result.non2xx, bytesPerSecond: result.throughput.average, cpuUsPerRequest};
}

/** autocannon's latency histogram counts whole milliseconds */
export const millis = (ms: number): string => (ms < 1 ? "<1" : ms.toFixed(0));

/** A text table: columns as wide as their widest cell, numbers to the right, the columns in `leftAligned` to the left. */
export function printColumns(header: string[], lines: string[][], leftAligned: number[] = [0]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const row = (cells: string[]) => cells.map((c, i) => (leftAligned.includes(i) ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ");
  console.log(`\n${row(header)}\n${widths.map((w) => "-".repeat(w)).join("  ")}\n${lines.map(row).join("\n")}`);
}

export function printTable(ceiling: Measurement, rows: Measurement[]): void {
  const header = ["endpoint", "req/s", "p50 ms", "p99 ms", "MB/s", "of ceiling", "failed", "non-2xx"];
  const lines = [ceiling, ...rows].map((m) => [
    m.name,
    m.rps.toFixed(0),
    millis(m.p50),
    millis(m.p99),
    (m.bytesPerSecond / 1e6).toFixed(1),
    m === ceiling ? "1.00" : (m.rps / ceiling.rps).toFixed(3),
    String(m.failed),
    String(m.non2xx),
  ]);
  printColumns(header, lines);
  console.log(`\n${CONNECTIONS} connections, ${DURATION_S} s per endpoint after ${WARMUP_S} s unmeasured, loopback ${HOST}; latency in whole ms; "failed": no answer (connection errors, timeouts); "non-2xx": answered with another status.`);
}
