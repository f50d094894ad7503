// `npm run bench:buffering`: the REST server's two ways of sending an answer the node produces in
// pieces, on both sides of the buffer limit (src/api/server/writeChunks.ts, 1 MiB): answers up to
// it are gathered and sent whole with Content-Length, larger ones stream in chunks. A dev node on
// the mainnet preset (whose states are several MiB as JSON) answers small validator lists (whole)
// and whole states as JSON (chunked) and as SSZ (one buffer), beside the bare-server ceiling.
// Then the same two JSON bodies (all 64 validators, a whole state) served by writeChunks alone in
// a server of their own, once with the 1 MiB limit and once with the other choice on each side
// (the small body chunked, the large one gathered whole), to show what the limit buys.
import type {ChildProcess} from "node:child_process";
import {mkdtempSync, rmSync, writeFileSync} from "node:fs";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {fileURLToPath} from "node:url";
import {CEILING_SERVER, HOST, type Measurement, type Target, measure, printTable, startServer, stop, waitForHeadSlot} from "./harness.ts";

const BIN = fileURLToPath(new URL("../bin/beacon-gateway.js", import.meta.url));
const SSZ = {accept: "application/octet-stream"};
const PIECES_SERVER = fileURLToPath(new URL("./piecesServer.ts", import.meta.url));
const ONE_MIB = 1024 * 1024;

/** One request's body size and framing: `Content-Length` (sent whole) or `chunked` (streamed). */
async function framing(base: string, target: Target): Promise<string> {
  const res = await fetch(base + (target.path as string), {headers: target.headers});
  const bytes = (await res.arrayBuffer()).byteLength;
  const how = res.headers.get("content-length") !== null ? "Content-Length" : res.headers.get("transfer-encoding") ?? "?";
  return `${target.name}: HTTP ${res.status}, ${(bytes / 1024).toFixed(1)} KiB, ${how}`;
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), "bench-buffering-"));
  const servers: ChildProcess[] = [];
  try {
    const ceilingServer = await startServer(["-e", CEILING_SERVER], "listening");
    servers.push(ceilingServer.proc);
    const nodeArgs = [BIN, "node", "--preset", "mainnet", "--rest", "--rest-port", "0", "--rest-address", HOST, "--data-dir", dataDir, "--log-format", "json", "--listen-address", HOST, "--tcp-port", "0", "--no-discovery"];
    const node = await startServer(nodeArgs, "REST API listening");
    servers.push(node.proc);
    const base = `http://${HOST}:${node.port}`;
    await waitForHeadSlot(base, 0);

    const ceiling = await measure(`http://${HOST}:${ceilingServer.port}`, {name: "bare node:http (ceiling)", path: "/"});
    const targets: Target[] = [
      {name: "validators?id=1 (JSON, under the limit)", path: "/eth/v1/beacon/states/head/validators?id=1"},
      {name: "validators, all 64 (JSON, under the limit)", path: "/eth/v1/beacon/states/head/validators"},
      {name: "debug state (JSON, over the limit)", path: "/eth/v2/debug/beacon/states/head"},
      {name: "debug state (SSZ, one buffer)", path: "/eth/v2/debug/beacon/states/head", headers: SSZ},
    ];
    for (const target of targets) console.log(await framing(base, target));
    const rows: Measurement[] = [];
    for (const target of targets) {
      process.stdout.write(`  ${target.name}…\n`);
      rows.push(await measure(base, target));
    }

    const smallFile = join(dataDir, "validators.json");
    const largeFile = join(dataDir, "state.json");
    writeFileSync(smallFile, await (await fetch(base + targets[1].path)).text());
    writeFileSync(largeFile, await (await fetch(base + targets[2].path)).text());
    for (const [limit, small, large] of [
      [ONE_MIB, "whole", "chunked"],
      [0, "chunked", null],
      [Number.MAX_SAFE_INTEGER, null, "whole"],
    ] as const) {
      const pieces = await startServer([PIECES_SERVER, String(limit), smallFile, largeFile], "listening");
      servers.push(pieces.proc);
      const at = `http://${HOST}:${pieces.port}`;
      const label = limit === ONE_MIB ? "limit 1 MiB" : `limit ${limit === 0 ? "0" : "none"}`;
      if (small) rows.push(await measure(at, {name: `writeChunks, 64 validators, ${small} (${label})`, path: "/small"}));
      if (large) rows.push(await measure(at, {name: `writeChunks, state, ${large} (${label})`, path: "/large"}));
      await stop(pieces.proc);
    }
    printTable(ceiling, rows);
  } finally {
    for (const proc of servers.reverse()) await stop(proc);
    rmSync(dataDir, {recursive: true, force: true});
  }
}

await main();
