// The table of `npm run bench:api`: each endpoint's rate and p99 on each server, over the rounds,
// beside the ceiling of the same run, and whether the small answers meet their targets
// (at least 2x the peer, at least half the ceiling, p99 under 5 ms).
import {type Measurement, millis, printColumns} from "./harness.ts";

export interface Runs {
  /** the bare server, once per round */
  ceiling: Measurement[];
  /** per endpoint: one list of rounds per server, the first server being ours */
  byTarget: Map<string, {small: boolean; byServer: Measurement[][]; bytes?: number; ceiling: Measurement[]}>;
}

export const TARGETS = {timesPeer: 2, ofCeiling: 0.5, p99Ms: 5};

const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
const range = (ms: Measurement[]): string => {
  const rates = ms.map((m) => Math.round(m.rps));
  return Math.min(...rates) === Math.max(...rates) ? String(rates[0]) : `${Math.min(...rates)}–${Math.max(...rates)}`;
};
const worstP99 = (ms: Measurement[]): number => Math.max(...ms.map((m) => m.p99));
/** each round's p99, in the order run */
const p99s = (ms: Measurement[]): string => ms.map((m) => millis(m.p99)).join("/");
const failures = (ms: Measurement[]): number => ms.reduce((n, m) => n + m.failed, 0);
const non2xx = (ms: Measurement[]): number => ms.reduce((n, m) => n + m.non2xx, 0);

/** `heading`: the lines naming the servers, their versions and the machine, printed above the table. */
export function printComparison(runs: Runs, serverNames: string[], heading: string[]): void {
  console.log(`\nSingle endpoints, closed loop`);
  for (const line of heading) console.log(line);
  const ceiling = mean(runs.ceiling.map((m) => m.rps));
  const withPeer = serverNames.length > 1;
  const header = ["endpoint", "bytes", ...serverNames.flatMap((n) => [`${n} req/s`, "p99 ms"]), ...(withPeer ? ["x peer"] : []), "ceiling req/s", "p99 ms", "of ceiling", "failed", "non-2xx", "targets"];
  const lines: string[][] = [["bare node:http (ceiling)", "30", range(runs.ceiling), p99s(runs.ceiling), ...serverNames.slice(1).flatMap(() => ["", ""]), ...(withPeer ? [""] : []), "", "", "1.00", String(failures(runs.ceiling)), String(non2xx(runs.ceiling)), ""]];
  for (const [name, {small, byServer, bytes, ceiling: sized}] of runs.byTarget) {
    const ours = byServer[0];
    const timesPeer = withPeer ? mean(ours.map((m) => m.rps)) / mean(byServer[1].map((m) => m.rps)) : undefined;
    const ofCeiling = mean(ours.map((m) => m.rps)) / (sized.length > 0 ? mean(sized.map((m) => m.rps)) : ceiling);
    const missed: string[] = [];
    if (timesPeer !== undefined && timesPeer < TARGETS.timesPeer) missed.push(`<${TARGETS.timesPeer}x peer`);
    if (ofCeiling < TARGETS.ofCeiling) missed.push(`<${TARGETS.ofCeiling * 100}% ceiling`);
    if (worstP99(ours) >= TARGETS.p99Ms) missed.push(`p99 ≥${TARGETS.p99Ms} ms`);
    if (failures(ours) + non2xx(ours) > 0) missed.push("failed or non-2xx");
    lines.push([
      name,
      bytes ? String(bytes) : "<1024",
      ...byServer.flatMap((ms) => [range(ms), p99s(ms)]),
      ...(timesPeer !== undefined ? [timesPeer.toFixed(2)] : []),
      sized.length > 0 ? range(sized) : "",
      sized.length > 0 ? p99s(sized) : "",
      ofCeiling.toFixed(2),
      byServer.map(failures).join("/"),
      byServer.map(non2xx).join("/"),
      small ? (missed.length === 0 ? "met" : missed.join(", ")) : "",
    ]);
  }
  printColumns(header, lines, [0, header.length - 1]);
  console.log(`req/s: the range over the rounds; p99: each round's, in whole ms (a target is met when every round's is); "x peer" and "of ceiling":
ratios of the means. Answers over 1 KiB are compared with the bare server answering as many bytes ("ceiling req/s" and its p99), smaller
ones with its small constant; "failed": no answer (connection errors, timeouts), "non-2xx": answered with another status, each per
server in the order of the columns.`);
  printCpu(runs, serverNames);
}

/** Each server's CPU time per request (user and system, all its threads), beside the bare server's for the same bytes. */
function printCpu(runs: Runs, serverNames: string[]): void {
  const perRequest = (ms: Measurement[]): number | undefined => (ms.every((m) => m.cpuUsPerRequest !== undefined) ? mean(ms.map((m) => m.cpuUsPerRequest!)) : undefined);
  const cell = (us: number | undefined): string => (us === undefined ? "" : us.toFixed(1));
  const smallCeiling = perRequest(runs.ceiling);
  const lines = [...runs.byTarget].map(([name, {byServer, ceiling: sized}]) => {
    const ceiling = sized.length > 0 ? perRequest(sized) : smallCeiling;
    const ours = perRequest(byServer[0]);
    return [name, ...byServer.map((ms) => cell(perRequest(ms))), cell(ceiling), ours !== undefined && ceiling !== undefined ? (ours / ceiling).toFixed(2) : ""];
  });
  printColumns(["CPU µs per request", ...serverNames, "bare server", "x bare"], lines);
  console.log(`The mean over the rounds of each process's user and system time (all its threads, the chain's own work included) over
the requests it answered; "bare server": the one answering as many bytes, or its small constant.`);
}

