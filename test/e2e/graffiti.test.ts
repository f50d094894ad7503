import {TEST_NETWORK_ARGS} from "./nodeProcess.ts";
import {afterAll, describe, expect, it} from "@jest/globals";
import {mkdtempSync, rmSync} from "node:fs";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {parseNodeOptions, type NodeOptions} from "../../src/cli/options.ts";
import {startNode, type RunningNode} from "../../src/node.ts";

/**
 * The graffiti setting on a real node, in this process: set over HTTP, it is what the node's
 * own validators put in the next block they propose, and a restart on the same data dir keeps it.
 */

const dataDir = mkdtempSync(join(tmpdir(), "graffiti-e2e-"));
const running: RunningNode[] = [];

// stopping a node (its network, chain and database) took over jest's default 5 s once, beside two other files on two cores
afterAll(async () => {
  for (const node of running) await node.stop();
  rmSync(dataDir, {recursive: true, force: true});
}, 30_000);

function options(extra: string[]): NodeOptions {
  const opts = parseNodeOptions(["--rest", "--rest-port", "0", "--data-dir", dataDir, "--seconds-per-slot", "1", "--log-level", "WARN", ...TEST_NETWORK_ARGS, ...extra]);
  if (opts === "help") throw new Error("unexpected help");
  return opts;
}

async function start(extra: string[] = []): Promise<{node: RunningNode; url: string}> {
  const node = await startNode(options(extra));
  running.push(node);
  return {node, url: `http://127.0.0.1:${node.restPort}`};
}

async function json(url: string, path: string, init?: RequestInit): Promise<{status: number; body: any}> {
  const res = await fetch(url + path, init);
  return {status: res.status, body: await res.json()};
}

/** The graffiti (as text) of the first head block after `afterSlot`. */
async function nextBlockGraffiti(url: string, afterSlot: number): Promise<{slot: number; text: string}> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const {status, body} = await json(url, "/eth/v2/beacon/blocks/head");
    const slot = Number(body.data?.message.slot);
    if (status === 200 && slot > afterSlot) {
      const text = Buffer.from(body.data.message.body.graffiti.slice(2), "hex").toString("utf8").replace(/\0+$/, "");
      return {slot, text};
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`no block after slot ${afterSlot}`);
}

/** A slot whose block is surely produced after now: the one after the next (the next may be in production already). */
const slotAfterNext = async (url: string): Promise<number> => Number((await json(url, "/eth/v1/node/syncing")).body.data.head_slot) + 1;

describe("graffiti on a running node", () => {
  it(
    "starts from --graffiti, changes over HTTP into the next proposed block, and survives a restart",
    async () => {
      const first = await start(["--graffiti", "from the command line"]);
      expect((await nextBlockGraffiti(first.url, 0)).text).toBe("from the command line");

      const set = await json(first.url, "/ext/v1/graffiti", {method: "POST", headers: {"Content-Type": "text/plain"}, body: "set over http"});
      expect(set).toEqual({status: 200, body: {data: true}});
      const refused = await json(first.url, "/ext/v1/graffiti", {method: "POST", headers: {"Content-Type": "text/plain"}, body: "0xnot-hex"});
      expect(refused.status).toBe(400);
      expect((await nextBlockGraffiti(first.url, await slotAfterNext(first.url))).text).toBe("set over http");

      await first.node.stop();
      const second = await start();
      expect((await json(second.url, "/ext/v1/graffiti")).body.data.text).toBe("set over http");
      expect((await nextBlockGraffiti(second.url, await slotAfterNext(second.url))).text).toBe("set over http");
    },
    90_000
  );
});
