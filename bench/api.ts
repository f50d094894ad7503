// `npm run bench:api`: requests per second and latency of a few REST endpoints of a live dev
// node, beside a bare Node http server answering a constant (the ceiling on this machine).
// Both servers run as their own processes; autocannon drives them from this one, over loopback.
import {mkdtempSync, rmSync} from "node:fs";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {fileURLToPath} from "node:url";
import type {ChildProcess} from "node:child_process";
import {CEILING_SERVER, HOST, type Measurement, type Target, chainClock, measure, printTable, startServer, stop, waitForHeadSlot} from "./harness.ts";

const BIN = fileURLToPath(new URL("../bin/beacon-gateway.js", import.meta.url));
/** the dev chain needs a few slots before every endpoint has something to answer */
const MIN_HEAD_SLOT = 2;
const VALIDATORS = 64;

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), "bench-api-"));
  const servers: ChildProcess[] = [];
  try {
    const ceilingServer = await startServer(["-e", CEILING_SERVER], "listening");
    servers.push(ceilingServer.proc);
    const nodeArgs = [BIN, "node", "--rest", "--rest-port", "0", "--rest-address", HOST, "--data-dir", dataDir, "--log-format", "json", "--listen-address", HOST, "--tcp-port", "0", "--no-discovery"];
    const node = await startServer(nodeArgs, "REST API listening");
    servers.push(node.proc);
    const base = `http://${HOST}:${node.port}`;
    console.log(`dev node on ${base}; waiting for slot ${MIN_HEAD_SLOT}…`);
    await waitForHeadSlot(base, MIN_HEAD_SLOT);
    const clock = await chainClock(base);

    const ceiling = await measure(`http://${HOST}:${ceilingServer.port}`, {name: "bare node:http (ceiling)", path: "/"});
    const indices = JSON.stringify(Array.from({length: VALIDATORS}, (_, i) => String(i)));
    const targets: Target[] = [
      {name: "GET /eth/v1/node/version", path: "/eth/v1/node/version"},
      {name: "GET /eth/v1/beacon/headers/head", path: "/eth/v1/beacon/headers/head"},
      {name: "GET /eth/v1/beacon/states/head/finality_checkpoints", path: "/eth/v1/beacon/states/head/finality_checkpoints"},
      {name: "GET /eth/v1/validator/attestation_data", path: () => `/eth/v1/validator/attestation_data?slot=${clock().slot}&committee_index=0`},
      {name: "GET /eth/v1/validator/duties/proposer", path: () => `/eth/v1/validator/duties/proposer/${clock().epoch}`},
      {name: `POST /eth/v1/validator/duties/attester (${VALIDATORS})`, path: () => `/eth/v1/validator/duties/attester/${clock().epoch}`, method: "POST", body: indices},
      {name: "GET /eth/v1/beacon/states/head/validators?id=1", path: "/eth/v1/beacon/states/head/validators?id=1"},
      {name: "GET /eth/v1/beacon/states/head/validators", path: "/eth/v1/beacon/states/head/validators"},
    ];
    const rows: Measurement[] = [];
    for (const target of targets) {
      process.stdout.write(`  ${target.name}…\n`);
      rows.push(await measure(base, target));
    }
    printTable(ceiling, rows);
  } finally {
    for (const proc of servers.reverse()) await stop(proc);
    rmSync(dataDir, {recursive: true, force: true});
  }
}

await main();
