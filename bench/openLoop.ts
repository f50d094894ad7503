// An open-loop load: each request of a schedule is sent at its time whether or not the earlier
// ones have been answered, and its latency counts from that time (not from when it could be sent),
// so a server that falls behind shows it in the latency instead of slowing the load down
// (no coordinated omission). The load is sent by a process of its own (bench/loadGenerator.ts),
// started once and kept for the bench's runs. And the step search for the highest offered rate
// whose p99 stays under a bound.
import {type ChildProcess, fork} from "node:child_process";
import type {Category, MixRequest} from "./mix.ts";
import type {GeneratorReady, LoadResult, LoadRun} from "./loadGenerator.ts";
import {encodeRequest} from "./rawHttp.ts";

export interface Outcome {
  category: Category;
  path: string;
  /** from the request's scheduled time to the last byte of its answer */
  latencyMs: number;
  /** from its scheduled time to when the load generator sent it: the generator's own lateness, counted in latencyMs */
  sentLateMs: number;
  /** the HTTP status, or 0 when there was no answer (connection error or timeout) */
  status: number;
  bytes: number;
  /** of an answer other than 2xx, the start of its body (of a failed request, the error) */
  message?: string;
}

const TIMEOUT_MS = 10_000;
/** a request sent later than this after its time was sent late by the load generator itself (its timers fire to the millisecond) */
export const SENT_LATE_MS = 2;
/** the latency over which a request counts as late (the mix's p99 bound) */
export const LATE_MS = 5;

interface Generator {
  proc: ChildProcess;
  /** the priority asked for and the one its threads got */
  priority: {asked: number; nice: number};
  runs: Map<number, (result: LoadResult) => void>;
  nextId: number;
}

let started: Promise<Generator> | undefined;

/** The load generator's process, started on first use; its IPC channel holds this process open only while a run is under way. */
export function loadGenerator(): Promise<Generator> {
  started ??= new Promise((resolve, reject) => {
    const proc = fork(new URL("./loadGenerator.ts", import.meta.url), [], {serialization: "advanced", stdio: ["ignore", "inherit", "inherit", "ipc"], execArgv: []});
    const generator: Generator = {proc, priority: {asked: 0, nice: 0}, runs: new Map(), nextId: 0};
    proc.once("error", reject);
    proc.once("exit", (code) => reject(new Error(`the load generator exited (code ${code}) before it was ready`)));
    proc.on("message", (message: GeneratorReady | LoadResult) => {
      if ("ready" in message) {
        generator.priority = {asked: message.asked, nice: message.nice};
        proc.channel?.unref();
        proc.unref();
        resolve(generator);
      } else {
        generator.runs.get(message.id)?.(message);
        generator.runs.delete(message.id);
        if (generator.runs.size === 0) proc.channel?.unref();
      }
    });
  });
  return started;
}

/** What the tables say of the load generator: its process and priority. */
export async function loadGeneratorLine(): Promise<string> {
  const {asked, nice} = (await loadGenerator()).priority;
  const priority = nice === asked ? `at nice ${nice}` : `at nice ${nice} (nice ${asked} was not permitted here)`;
  return `load generator: a process of its own (bench/loadGenerator.ts) ${priority}, pre-encoded requests on keep-alive sockets`;
}

/**
 * Sends `schedule` (sorted by `atMs`) to `base`, time 0 being `startAtMs` (a `Date.now()` time),
 * and resolves once every request is answered or has failed. The outcomes are in schedule order.
 */
export async function runOpenLoop(base: string, schedule: MixRequest[], startAtMs: number, maxSockets = 1024): Promise<Outcome[]> {
  const generator = await loadGenerator();
  const url = new URL(base);
  const texts = schedule.map((r) => encodeRequest(url.host, r));
  const offsets = new Uint32Array(schedule.length + 1);
  texts.forEach((text, i) => (offsets[i + 1] = offsets[i] + Buffer.byteLength(text)));
  const requests = Buffer.alloc(offsets[schedule.length]);
  texts.forEach((text, i) => requests.write(text, offsets[i]));
  const id = generator.nextId++;
  const run: LoadRun = {id, host: url.hostname, port: Number(url.port || 80), requests, offsets, atMs: Float64Array.from(schedule, (r) => r.atMs), startAtMs, maxSockets, timeoutMs: TIMEOUT_MS};
  const result = await new Promise<LoadResult>((resolve, reject) => {
    const lost = (): void => reject(new Error("the load generator exited during a run"));
    generator.proc.once("exit", lost);
    generator.runs.set(id, (done) => {
      generator.proc.off("exit", lost);
      resolve(done);
    });
    generator.proc.channel?.ref();
    generator.proc.send(run, (e) => e && reject(e));
  });
  const messages = new Map(result.messages);
  return schedule.map((r, i) => ({
    category: r.category,
    path: r.path,
    latencyMs: result.latencyMs[i],
    sentLateMs: result.sentLateMs[i],
    status: result.status[i],
    bytes: result.bytes[i],
    message: messages.get(i),
  }));
}

/** The `p`th percentile (0-100) of `values`, nearest rank. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

export interface LoadSummary {
  requests: number;
  /** no answer: connection errors and timeouts */
  failed: number;
  /** answered, not 2xx */
  non2xx: number;
  p50: number;
  p99: number;
  /** the answers other than 2xx, by "category status" (status 0: failed), with a path of each */
  unsuccessful: Map<string, {count: number; example: string; message?: string}>;
  byCategory: Map<Category, {requests: number; p50: number; p99: number; non2xx: number; failed: number}>;
  /** requests over LATE_MS, and how many of them this process itself sent over SENT_LATE_MS late */
  late: number;
  sentLate: number;
}

export function summarize(outcomes: Outcome[]): LoadSummary {
  const byCategory: LoadSummary["byCategory"] = new Map();
  const groups = new Map<Category, Outcome[]>();
  for (const o of outcomes) {
    const group = groups.get(o.category);
    if (group) group.push(o);
    else groups.set(o.category, [o]);
  }
  const counts = (os: Outcome[]) => ({failed: os.filter((o) => o.status === 0).length, non2xx: os.filter((o) => o.status !== 0 && (o.status < 200 || o.status > 299)).length});
  for (const [category, os] of groups) {
    const latencies = os.map((o) => o.latencyMs);
    byCategory.set(category, {requests: os.length, p50: percentile(latencies, 50), p99: percentile(latencies, 99), ...counts(os)});
  }
  const unsuccessful: LoadSummary["unsuccessful"] = new Map();
  for (const o of outcomes.filter((o) => o.status < 200 || o.status > 299)) {
    const key = `${o.category} ${o.status}`;
    const seen = unsuccessful.get(key);
    if (seen) seen.count++;
    else unsuccessful.set(key, {count: 1, example: o.path, message: o.message});
  }
  const latencies = outcomes.map((o) => o.latencyMs);
  const late = outcomes.filter((o) => o.latencyMs > LATE_MS);
  const sentLate = late.filter((o) => o.sentLateMs > SENT_LATE_MS).length;
  return {requests: outcomes.length, p50: percentile(latencies, 50), p99: percentile(latencies, 99), unsuccessful, byCategory, late: late.length, sentLate, ...counts(outcomes)};
}

/** The unsuccessful answers by category and status (0: no answer), each with an example path and the start of its message. */
export function unsuccessfulLine(unsuccessful: LoadSummary["unsuccessful"]): string {
  return [...unsuccessful].map(([key, {count, example, message}]) => `${key} x${count} (e.g. ${example}${message ? `: ${message.replace(/\s+/g, " ")}` : ""})`).join("; ");
}

export interface Probe {
  rate: number;
  p99: number;
  failed: number;
  ok: boolean;
}

/**
 * The highest offered rate whose p99 stays under `p99Ms` with no failed request, found in steps:
 * from `start`, doubled while it holds (up to `max`), then halved while it does not; then
 * `refine` bisections between the last rate that held and the first that did not. `probe` runs
 * the load at one rate. Returns 0 when even the lowest rate tried (`start` / 16) did not hold.
 */
export async function sustainedRate(
  probe: (rate: number) => Promise<{p99: number; failed: number}>,
  opts: {start: number; max: number; p99Ms: number; refine?: number},
): Promise<{rate: number; probes: Probe[]}> {
  const probes: Probe[] = [];
  const tryRate = async (rate: number): Promise<boolean> => {
    const {p99, failed} = await probe(rate);
    const ok = p99 < opts.p99Ms && failed === 0;
    probes.push({rate, p99, failed, ok});
    return ok;
  };
  let good = 0;
  let bad = Infinity;
  let rate = Math.round(opts.start);
  if (await tryRate(rate)) {
    good = rate;
    while (rate < opts.max) {
      rate = Math.min(opts.max, rate * 2);
      if (!(await tryRate(rate))) {
        bad = rate;
        break;
      }
      good = rate;
    }
  } else {
    bad = rate;
    while (rate > opts.start / 16) {
      rate = Math.round(rate / 2);
      if (await tryRate(rate)) {
        good = rate;
        break;
      }
      bad = rate;
    }
  }
  if (good === 0 || bad === Infinity) return {rate: good, probes};
  for (let i = 0; i < (opts.refine ?? 2); i++) {
    const mid = Math.round((good + bad) / 2);
    if (mid === good || mid === bad) break;
    if (await tryRate(mid)) good = mid;
    else bad = mid;
  }
  return {rate: good, probes};
}
