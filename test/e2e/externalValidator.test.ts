import {afterAll, describe, expect, it} from "@jest/globals";
import {NodeProcess, getJson, tempDataDir} from "./nodeProcess.ts";

const SECONDS_PER_SLOT = 2;
const SLOTS_PER_EPOCH = 8;

/**
 * `beacon-gateway validator` as its own process, over the node's REST port only: a node
 * that runs no validators is kept finalizing by it.
 */
describe("standalone validator client over HTTP", () => {
  const nodeData = tempDataDir("extnode");
  const vcData = tempDataDir("extvc");
  const procs: NodeProcess[] = [];
  afterAll(async () => {
    for (const p of procs) await p.stop("SIGKILL");
    nodeData.remove();
    vcData.remove();
  });

  it(
    "drives a node without validators to finality",
    async () => {
      const node = new NodeProcess([
        "node", "--rest", "--rest-port", "0", "--data-dir", nodeData.dir, "--seconds-per-slot", String(SECONDS_PER_SLOT), "--dev-validators", "none",
      ]);
      procs.push(node);
      const url = await node.restUrl();
      const vc = new NodeProcess(["validator", "--beacon-node", url, "--interop-indices", "0..63", "--data-dir", vcData.dir]);
      procs.push(vc);
      await vc.waitForLog((l) => l.msg === "Validator client started", 60_000, "validator client start");

      const genesis = await getJson(url, "/eth/v1/beacon/genesis");
      const genesisTime = Number(genesis.body.data.genesis_time);
      const deadline = (genesisTime + 7 * SLOTS_PER_EPOCH * SECONDS_PER_SLOT) * 1000;
      let finalized = 0;
      while (Date.now() < deadline) {
        const fc = await getJson(url, "/eth/v1/beacon/states/head/finality_checkpoints");
        finalized = Number(fc.body.data.finalized.epoch);
        if (finalized >= 2) break;
        await new Promise((r) => setTimeout(r, 1000));
      }
      expect(finalized).toBeGreaterThanOrEqual(2);
      expect(node.logs.filter((l) => l.msg === "imported block").length).toBeGreaterThan(2 * SLOTS_PER_EPOCH);
      expect(vc.logs.filter((l) => l.level >= 50)).toEqual([]);
      expect((await vc.stop("SIGTERM")).code).toBe(0);
    },
    9 * SLOTS_PER_EPOCH * SECONDS_PER_SLOT * 1000
  );
});
