// The tables of bench:api's mix (bench/apiMix.ts): at the fixed offered rate, each server's p50
// and p99 per category, its requests over the bound (and how many of them the load generator
// itself sent late), its failed and non-2xx answers and CPU per request; at saturation,
// the highest offered rate whose p99 stayed under the bound, beside the peer's and the bare
// server's for the same bytes.
import {printColumns} from "./harness.ts";
import {CATEGORIES} from "./mix.ts";
import {SENT_LATE_MS, unsuccessfulLine} from "./openLoop.ts";
import type {MixResult} from "./apiMix.ts";

const ms = (v: number | undefined): string => (v === undefined || Number.isNaN(v) ? "" : v < 10 ? v.toFixed(1) : v.toFixed(0));
const cpu = (us: number | undefined): string => (us === undefined ? "" : us.toFixed(0));

/** `results`: ours first, then the peer if any, the bare server last. */
export function printMixReport(results: MixResult[], o: {heading: string[]; rate: number; slots: number; seed: number; p99Ms: number}): void {
  const ours = results[0];
  const ceiling = results[results.length - 1];
  const peer = results.length > 2 ? results[1] : undefined;
  console.log(`\nRealistic mix (seed ${o.seed}, ${o.slots}-slot windows, open loop: latency from each request's scheduled time)`);
  for (const line of o.heading) console.log(line);

  console.log(`\nAt a fixed offered rate (${o.rate} req/s asked; p50/p99 in ms):`);
  const categories = CATEGORIES.filter((c) => results.some((r) => r.fixed.byCategory.has(c)));
  const fixedLines = results.map((r) => [
    r.name,
    r.fixed.offered.toFixed(0),
    String(r.fixed.requests),
    `${ms(r.fixed.p50)}/${ms(r.fixed.p99)}`,
    ...categories.map((c) => {
      const cell = r.fixed.byCategory.get(c);
      return cell ? `${ms(cell.p50)}/${ms(cell.p99)}` : "";
    }),
    `${r.fixed.late} (${r.fixed.sentLate})`,
    String(r.fixed.failed),
    String(r.fixed.non2xx),
    cpu(r.fixed.cpuUsPerRequest),
  ]);
  printColumns(["server", "offered req/s", "requests", "all", ...categories, `over ${o.p99Ms} ms (sent late)`, "failed", "non-2xx", "CPU µs/req"], fixedLines);
  for (const r of results.filter((r) => r.fixed.unsuccessful.size > 0)) {
    console.log(`${r.name}, not 2xx: ${unsuccessfulLine(r.fixed.unsuccessful)}`);
  }
  console.log(`requests per category: ${categories.map((c) => `${c} ${ours.fixed.byCategory.get(c)?.requests ?? 0}`).join(", ")}. "failed": no answer (connection
error, or none within 10 s); "non-2xx": answered with another status; "sent late": of the requests over ${o.p99Ms} ms, those the
load generator sent over ${SENT_LATE_MS} ms after their time (its own stalls, which open loop counts in their latency).
The bare server answers each request with as many bytes as our node did, so its p99 is the floor of this machine and load
generator for the same bytes.`);

  console.log(`\nSustained rate: the highest offered rate whose p99 stayed under ${o.p99Ms} ms with nothing failed (a step search):`);
  const sustainedLines = results.map((r) => [
    r.name,
    String(r.sustained.rate),
    peer && r === ours && peer.sustained.rate > 0 ? (ours.sustained.rate / peer.sustained.rate).toFixed(2) : "",
    ceiling.sustained.rate > 0 ? (r.sustained.rate / ceiling.sustained.rate).toFixed(2) : "",
    cpu(r.sustained.cpuUsPerRequest),
    r.sustained.probes.map((p) => `${p.rate}: ${ms(p.p99)}${p.failed > 0 ? ` (${p.failed} failed)` : ""}${p.ok ? "" : " ✗"}`).join(", "),
  ]);
  printColumns(["server", `req/s at p99 < ${o.p99Ms} ms`, "x peer", "of bare server", "CPU µs/req", "steps (offered req/s: p99 ms)"], sustainedLines, [0, 5]);
}
