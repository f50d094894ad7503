// `npm run bench:api`: requests per second and latency of the REST endpoints validator clients
// call most, on a live dev node, beside a bare Node http server answering a constant (the ceiling
// on this machine) and, with `BENCH_PEER=<dir of an installed Lodestar 1.5.1 peer>`, beside
// Lodestar on the same kind of chain (bellatrix, minimal preset, 64 validators, 4 s slots).
// Every server runs as its own process; autocannon drives them from this one, over loopback,
// the targets alternating so that a change in the machine's load hits all of them alike.
import {mkdtempSync, rmSync} from "node:fs";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {fileURLToPath} from "node:url";
import type {ChildProcess} from "node:child_process";
import {CEILING_SERVER, CONNECTIONS, DURATION_S, HOST, WARMUP_S, type Measurement, type Target, chainClock, devNodeArgs, measure, startServer, stop, waitForHeadSlot} from "./harness.ts";
import {freePort, peerName, rssMiB, startPeer} from "./peer.ts";
import {printComparison, type Runs} from "./comparison.ts";
import {runMix} from "./apiMix.ts";
import {OUR_NAME, machineLine} from "./machine.ts";

const BIN = fileURLToPath(new URL("../bin/beacon-gateway.js", import.meta.url));
/** the dev chains need a few slots before every endpoint has something to answer */
const MIN_HEAD_SLOT = 3;
const VALIDATORS = 64;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const PEER_DIR = process.env.BENCH_PEER;
/** only the endpoints whose name holds this text */
const ONLY = process.env.BENCH_ONLY;
/** `BENCH_MIX=0`: the single endpoints only; `BENCH_MIX=only`: the realistic mix only (bench/apiMix.ts) */
const MIX = process.env.BENCH_MIX ?? "1";
/**
 * While one server is measured, the other beacon nodes are stopped (SIGSTOP, then SIGCONT): each
 * runs its own chain, and a slot's work of the other (Lodestar's comes in bursts of 100-160 ms of
 * CPU) would take a core from the server measured or from autocannon on a 2-core machine. The
 * measured node's own chain work goes on. `BENCH_PAUSE_OTHERS=0` keeps them all running.
 */
const PAUSE_OTHERS = process.env.BENCH_PAUSE_OTHERS !== "0";

interface Server {
  /** short, for the columns */
  name: string;
  /** with its version and the Node.js it runs on, for the headings */
  fullName: string;
  base: string;
  pid: number;
  clock: () => {slot: number; epoch: number};
}

/** The endpoints, each with a path that may depend on the server's clock; `small` ones carry the issue's targets. */
function targets(clock: Server["clock"]): (Target & {small: boolean})[] {
  const indices = JSON.stringify(Array.from({length: VALIDATORS}, (_, i) => String(i)));
  const all: (Target & {small: boolean})[] = [
    {small: true, name: "GET /eth/v1/node/version", path: "/eth/v1/node/version"},
    {small: true, name: "GET /eth/v1/beacon/headers/head", path: "/eth/v1/beacon/headers/head"},
    {small: true, name: "GET /eth/v1/beacon/states/head/finality_checkpoints", path: "/eth/v1/beacon/states/head/finality_checkpoints"},
    {small: true, name: "GET /eth/v1/validator/attestation_data", path: () => `/eth/v1/validator/attestation_data?slot=${clock().slot}&committee_index=0`},
    {small: true, name: "GET /eth/v1/validator/duties/proposer/{epoch}", path: () => `/eth/v1/validator/duties/proposer/${clock().epoch}`},
    {small: true, name: `POST /eth/v1/validator/duties/attester/{epoch} (${VALIDATORS})`, path: () => `/eth/v1/validator/duties/attester/${clock().epoch}`, method: "POST", body: indices},
    {small: false, name: "GET /eth/v1/beacon/states/head/validators?id=1", path: "/eth/v1/beacon/states/head/validators?id=1"},
    {small: false, name: `GET /eth/v1/beacon/states/head/validators (${VALIDATORS})`, path: "/eth/v1/beacon/states/head/validators"},
  ];
  return ONLY === undefined ? all : all.filter((t) => t.name.includes(ONLY));
}

/** `run`'s result, with every beacon node but `measured` (none: all of them) stopped meanwhile. */
async function withOthersStopped<T>(servers: Server[], measured: Server | undefined, run: () => Promise<T>): Promise<T> {
  const others = PAUSE_OTHERS ? servers.filter((s) => s !== measured) : [];
  for (const s of others) process.kill(s.pid, "SIGSTOP");
  try {
    return await run();
  } finally {
    for (const s of others) process.kill(s.pid, "SIGCONT");
  }
}

/** The size of a target's answer now, in bytes. */
async function answerBytes(base: string, target: Target): Promise<number> {
  const path = typeof target.path === "string" ? target.path : target.path();
  const res = await fetch(base + path, {method: target.method ?? "GET", body: target.body, headers: target.body ? {"content-type": "application/json"} : {}});
  return (await res.arrayBuffer()).byteLength;
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), "bench-api-"));
  const procs: ChildProcess[] = [];
  try {
    const ceilingServer = await startServer(["-e", CEILING_SERVER], "listening");
    procs.push(ceilingServer.proc);
    const node = await startServer([BIN, ...devNodeArgs(dataDir, VALIDATORS)], "REST API listening");
    procs.push(node.proc);
    const servers: Server[] = [{name: "beacon-gateway", fullName: OUR_NAME, base: `http://${HOST}:${node.port}`, pid: node.proc.pid!, clock: () => ({slot: 0, epoch: 0})}];
    if (PEER_DIR) {
      const peer = await startPeer(PEER_DIR, {restPort: await freePort(), p2pPort: await freePort(), validators: VALIDATORS});
      procs.push(peer.proc);
      servers.push({name: "Lodestar 1.5.1", fullName: await peerName(peer.base, PEER_DIR), base: peer.base, pid: peer.proc.pid!, clock: () => ({slot: 0, epoch: 0})});
    }
    console.log(`waiting for slot ${MIN_HEAD_SLOT} on ${servers.map((s) => `${s.name} (${s.base})`).join(" and ")}…`);
    for (const server of servers) {
      await waitForHeadSlot(server.base, MIN_HEAD_SLOT);
      server.clock = await chainClock(server.base);
    }
    const rssBefore = servers.map((s) => rssMiB(s.pid));

    // answers over 1 KiB are measured beside a bare server answering as many bytes
    const sizes = await Promise.all(targets(servers[0].clock).map(async (t) => answerBytes(servers[0].base, t)));
    const runs: Runs = {ceiling: [], byTarget: new Map()};
    const ceilingBase = `http://${HOST}:${ceilingServer.port}`;
    const measureCeiling = () => withOthersStopped(servers, undefined, () => measure(ceilingBase, {name: "bare node:http (ceiling)", path: "/"}, ceilingServer.proc.pid));
    for (let round = 1; round <= (MIX === "only" ? 0 : ROUNDS); round++) {
      console.log(`round ${round} of ${ROUNDS}`);
      runs.ceiling.push(await measureCeiling());
      const perServer = servers.map((s) => targets(s.clock));
      for (let i = 0; i < perServer[0].length; i++) {
        const target = perServer[0][i];
        process.stdout.write(`  ${target.name}\n`);
        const bytes = sizes[i] > 1024 ? sizes[i] : undefined;
        const row = runs.byTarget.get(target.name) ?? {small: target.small, bytes, byServer: servers.map((): Measurement[] => []), ceiling: []};
        runs.byTarget.set(target.name, row);
        for (let s = 0; s < servers.length; s++) row.byServer[s].push(await withOthersStopped(servers, servers[s], () => measure(servers[s].base, perServer[s][i], servers[s].pid)));
        if (bytes) row.ceiling.push(await withOthersStopped(servers, undefined, () => measure(`http://${HOST}:${ceilingServer.port}`, {name: "ceiling", path: `/?bytes=${bytes}`}, ceilingServer.proc.pid)));
      }
    }
    if (runs.ceiling.length === 0) runs.ceiling.push(await measureCeiling());
    const heading = [
      `servers: ${servers.map((s) => s.fullName).join("; ")}; each chain: bellatrix, minimal preset, ${VALIDATORS} validators, 4 s slots`,
      machineLine(runs.ceiling.reduce((sum, m) => sum + m.rps, 0) / runs.ceiling.length),
    ];
    if (MIX !== "only") {
      printComparison(runs, servers.map((s) => s.name), heading);
      console.log(`${CONNECTIONS} connections, ${DURATION_S} s per endpoint and round after ${WARMUP_S} s unmeasured, ${ROUNDS} rounds, loopback ${HOST}; latency in whole ms.`);
    }
    if (MIX !== "0") {
      console.log("\nthe realistic mix…");
      await runMix(servers, {name: "bare node:http", base: ceilingBase, pid: ceilingServer.proc.pid!}, (measured, run) => withOthersStopped(servers, measured as Server | undefined, run), heading);
    }
    const rssAfter = servers.map((s) => rssMiB(s.pid));
    console.log(`\nRSS before and after the load: ${servers.map((s, i) => `${s.name} ${rssBefore[i]} → ${rssAfter[i]} MiB`).join("; ")}`);
  } finally {
    for (const proc of procs.reverse()) await stop(proc);
    rmSync(dataDir, {recursive: true, force: true});
  }
}

await main();
