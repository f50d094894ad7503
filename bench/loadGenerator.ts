// The open-loop load generator's process (started by bench/openLoop.ts). The benches' servers
// and this generator share the machine's two cores: in the same process as the bench, or at the
// same priority as the server, the generator stalled in the very bursts it measures, and sent
// about half of the late requests late itself. So it runs here, a process of its own, with its
// threads' priority raised when the system allows (nice -20; it needs CAP_SYS_NICE, as root has):
// it then runs the moment a request is due or an answer arrives, and takes only the little CPU
// its socket writes and answer scans need (bench/rawHttp.ts). Its requests come encoded, so the
// load itself allocates almost nothing.
//
// Messages: from the parent, a `LoadRun`; to it, first a `GeneratorReady`, then a `LoadResult` per run.
import {readdirSync} from "node:fs";
import {getPriority, setPriority} from "node:os";
import {ConnectionPool} from "./rawHttp.ts";

export interface LoadRun {
  /** the parent's number for the run, given back with its result */
  id: number;
  host: string;
  port: number;
  /** every request's bytes, one after another; request i is requests[offsets[i], offsets[i + 1]) */
  requests: Uint8Array;
  offsets: Uint32Array;
  /** when request i is due, in ms from `startAtMs` (a Date.now() time); ascending */
  atMs: Float64Array;
  startAtMs: number;
  maxSockets: number;
  timeoutMs: number;
}

export interface LoadResult {
  id: number;
  /** from each request's due time to the last byte of its answer (or its failure) */
  latencyMs: Float64Array;
  /** from its due time to when it was given a connection or queued for one */
  sentLateMs: Float64Array;
  status: Uint16Array;
  bytes: Float64Array;
  /** [request, message] of each answer other than 2xx and each failure */
  messages: [number, string][];
}

/** Its first message: the priority asked for (BENCH_LOAD_NICE, -20 by default) and the one its threads got. */
export interface GeneratorReady {
  ready: true;
  asked: number;
  nice: number;
}

/** Raises every thread of this process to `nice` (Linux: a thread's id is a pid to setpriority); the main thread's priority after. */
function raisePriority(nice: number): number {
  try {
    for (const tid of readdirSync("/proc/self/task")) setPriority(Number(tid), nice);
  } catch {
    // not permitted (no CAP_SYS_NICE), or no /proc: the generator runs at the priority it was given
  }
  return getPriority();
}

async function run(r: LoadRun): Promise<LoadResult> {
  const n = r.atMs.length;
  const requests = Buffer.from(r.requests.buffer, r.requests.byteOffset, r.requests.byteLength);
  const result: LoadResult = {id: r.id, latencyMs: new Float64Array(n), sentLateMs: new Float64Array(n), status: new Uint16Array(n), bytes: new Float64Array(n), messages: []};
  const pool = new ConnectionPool(r.host, r.port, r.maxSockets, r.timeoutMs);
  const origin = performance.now() + (r.startAtMs - Date.now());
  const pending: Promise<void>[] = [];
  const issue = (i: number): void => {
    const due = origin + r.atMs[i];
    result.sentLateMs[i] = performance.now() - due;
    pending.push(
      pool.send(requests.subarray(r.offsets[i], r.offsets[i + 1])).then((answer) => {
        result.latencyMs[i] = performance.now() - due;
        result.status[i] = answer.status;
        result.bytes[i] = answer.bytes;
        if (answer.message !== undefined) result.messages.push([i, answer.message]);
      }),
    );
  };
  await new Promise<void>((resolve) => {
    let next = 0;
    const tick = (): void => {
      const now = performance.now() - origin;
      while (next < n && r.atMs[next] <= now) issue(next++);
      if (next === n) resolve();
      else setTimeout(tick, Math.max(0, Math.min(r.atMs[next] - now, 50)));
    };
    tick();
  });
  await Promise.all(pending);
  pool.close();
  return result;
}

if (process.send) {
  // the parent gone, this process has nothing left to do
  process.on("disconnect", () => process.exit(0));
  process.on("message", (r: LoadRun) => {
    void run(r).then((result) => process.send!(result));
  });
  // BENCH_LOAD_NICE: another priority, to see what the raised one changes
  const asked = Number(process.env.BENCH_LOAD_NICE ?? -20);
  const ready: GeneratorReady = {ready: true, asked, nice: raisePriority(asked)};
  process.send(ready);
}
