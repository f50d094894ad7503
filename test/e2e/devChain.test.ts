import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import {ssz} from "@lodestar/types";
import {toHex} from "@lodestar/utils";
import {NodeProcess, getJson, tempDataDir} from "./nodeProcess.ts";
import {participationOfPreviousEpoch} from "./participation.ts";

const SLOTS_PER_EPOCH = 8;
const SECONDS_PER_SLOT = 2;

/**
 * The first thing a user runs: a dev chain with 64 interop validators driven by the node
 * itself, observed only through the REST API.
 */
describe("dev chain, end to end", () => {
  const data = tempDataDir("devchain");
  let node: NodeProcess;
  let url: string;

  beforeAll(async () => {
    node = new NodeProcess(["node", "--rest", "--rest-port", "0", "--data-dir", data.dir, "--seconds-per-slot", String(SECONDS_PER_SLOT)]);
    url = await node.restUrl();
  }, 120_000);

  afterAll(async () => {
    const exit = await node?.stop();
    data.remove();
    expect(exit?.code).toBe(0);
  });

  it(
    "proposes in nearly every slot, attests, and finalizes epoch 2 within 6 epochs",
    async () => {
      const genesis = await getJson(url, "/eth/v1/beacon/genesis");
      expect(genesis.status).toBe(200);
      const genesisTime = Number(genesis.body.data.genesis_time);
      const deadline = (genesisTime + 6 * SLOTS_PER_EPOCH * SECONDS_PER_SLOT) * 1000;

      let finalizedEpoch = 0;
      while (Date.now() < deadline + 1000) {
        const fc = await getJson(url, "/eth/v1/beacon/states/head/finality_checkpoints");
        finalizedEpoch = Number(fc.body.data.finalized.epoch);
        if (finalizedEpoch >= 2) break;
        await new Promise((r) => setTimeout(r, 1000));
      }
      expect(finalizedEpoch).toBeGreaterThanOrEqual(2);

      const head = await getJson(url, "/eth/v1/beacon/headers/head");
      const headSlot = Number(head.body.data.header.message.slot);
      let withBlock = 0;
      for (let slot = 1; slot <= headSlot; slot++) {
        const res = await getJson(url, `/eth/v1/beacon/headers/${slot}`);
        if (res.status === 200) withBlock++;
        else expect(res.status).toBe(404);
      }
      expect(withBlock / headSlot).toBeGreaterThanOrEqual(0.95);

      // Any state the node still has: finalized history is replayed from the archive.
      const finalizedSlot = finalizedEpoch * SLOTS_PER_EPOCH;
      for (const slot of [1, 2, Math.floor(finalizedSlot / 2), finalizedSlot - 1, headSlot - 1]) {
        const header = await getJson(url, `/eth/v1/beacon/headers/${slot}`);
        if (header.status !== 200) continue;
        const stateRoot = await getJson(url, `/eth/v1/beacon/states/${slot}/root`);
        expect(stateRoot.status).toBe(200);
        expect(stateRoot.body.data.root).toBe(header.body.data.header.message.state_root);
        const byRoot = await getJson(url, `/eth/v1/beacon/states/${stateRoot.body.data.root}/finality_checkpoints`);
        expect(byRoot.status).toBe(200);
      }

      const res = await fetch(`${url}/eth/v2/debug/beacon/states/head`, {headers: {accept: "application/octet-stream"}});
      expect(res.status).toBe(200);
      expect(res.headers.get("eth-consensus-version")).toBe("fulu");
      const state = ssz.fulu.BeaconState.deserialize(new Uint8Array(await res.arrayBuffer()));
      expect(participationOfPreviousEpoch(state)).toBeGreaterThanOrEqual(0.95);

      // the node hashes with a native SHA-256 (src/hasher.ts); this process with @noble/hashes: same roots
      const started = node.logs.find((line) => line.msg === "starting beacon-gateway");
      if (process.platform === "linux" && process.arch === "x64") expect(started?.hasher).toBe("hashtree");
      const headStateRoot = head.body.data.header.message.state_root as string;
      const headState = await fetch(`${url}/eth/v2/debug/beacon/states/${headStateRoot}`, {headers: {accept: "application/octet-stream"}});
      expect(headState.status).toBe(200);
      expect(toHex(ssz.fulu.BeaconState.hashTreeRoot(ssz.fulu.BeaconState.deserialize(new Uint8Array(await headState.arrayBuffer()))))).toBe(headStateRoot);
    },
    8 * SLOTS_PER_EPOCH * SECONDS_PER_SLOT * 1000
  );
});
