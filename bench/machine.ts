// What every bench's result names beside its numbers: the machine (cores, CPU model) and the rate
// a bare node:http server makes on it in the same run, and our node's own version. A number
// measured on another machine, or on this one at another moment, compares with neither.
import autocannon from "autocannon";
import {readFileSync} from "node:fs";
import {cpus} from "node:os";
import {CEILING_SERVER, CONNECTIONS, HOST, startServer, stop} from "./harness.ts";

const VERSION = (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {version: string}).version;

/** Our node as the tables name it: its version and the Node.js it runs on (the bench's own). */
export const OUR_NAME = `beacon-gateway ${VERSION} (Node ${process.versions.node})`;

/** The machine's cores and CPU model. */
export function machineCores(): string {
  const all = cpus();
  return `${all.length} cores (${all[0]?.model.trim() ?? "unknown CPU"})`;
}

/** The machine and the bare server's rate in this run, for a table's heading. */
export function machineLine(bareRps: number): string {
  return `machine: ${machineCores()}; bare node:http server answering 30 bytes: ${Math.round(bareRps)} req/s in this run (${CONNECTIONS} connections, loopback)`;
}

/** The bare server's rate now, for benches that have no ceiling of their own: a 2-second run. */
export async function bareServerRate(seconds = 2): Promise<number> {
  const server = await startServer(["-e", CEILING_SERVER], "listening");
  try {
    const result = await autocannon({url: `http://${HOST}:${server.port}/`, connections: CONNECTIONS, duration: seconds});
    return result.requests.average;
  } finally {
    await stop(server.proc);
  }
}

/** The machine line, measuring the bare server first. */
export async function measuredMachineLine(): Promise<string> {
  return machineLine(await bareServerRate());
}
