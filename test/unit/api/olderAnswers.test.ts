import {describe, expect, it} from "@jest/globals";
import {readFileSync} from "node:fs";
import {ApiClientError, isRouteMissing, readResponse} from "../../../src/api/client.ts";
import {routes} from "../../../src/api/routes/index.ts";
import type {Route} from "../../../src/api/routes/types.ts";
import type {WireResponse} from "../../../src/api/wire.ts";

/**
 * The route client reads what a node sends, not only what the newest spec requires. The answers
 * in fixtures/lodestar-1.5.1 were recorded from Lodestar 1.5.1 (March 2023, the interop peer)
 * with curl: they lack `finalized`, which the spec added later.
 */

interface Recorded {
  request: string;
  status: number;
  headers: Record<string, string>;
  body: string;
}

const recorded = (name: string): WireResponse => {
  const r = JSON.parse(readFileSync(new URL(`fixtures/lodestar-1.5.1/${name}.json`, import.meta.url), "utf8")) as Recorded;
  return {status: r.status, headers: r.headers, body: r.body};
};
const json = (body: unknown, headers: Record<string, string> = {}): WireResponse => ({
  status: 200,
  headers: {"content-type": "application/json", ...headers},
  body: JSON.stringify(body),
});
const read = (operationId: keyof typeof routes, res: WireResponse) => readResponse(routes[operationId] as Route, res) as {data: any; meta: any};

describe("answers of a node built to an older spec (Lodestar 1.5.1)", () => {
  it("finality checkpoints without `finalized`: read, with finalized false", () => {
    const {data, meta} = read("getStateFinalityCheckpoints", recorded("finalityCheckpoints"));
    expect(meta).toEqual({executionOptimistic: false, finalized: false});
    expect(data.finalized.epoch).toBe(2);
    expect(data.currentJustified.epoch).toBe(3);
  });

  it("a block header, a validator and a v2 block: read with their values", () => {
    expect(read("getBlockHeader", recorded("header")).data.header.message.slot).toBe(39);
    const validator = read("getStateValidator", recorded("validator"));
    expect(validator.data).toMatchObject({index: 0, status: "active_ongoing"});
    const block = read("getBlockV2", recorded("blockV2"));
    expect(block.meta).toEqual({version: "bellatrix", executionOptimistic: false, finalized: false});
    expect(block.data.message.slot).toBe(39);
  });

  it("syncing status without `el_offline` (added to the spec later): read, with elOffline false", () => {
    expect(read("getSyncingStatus", recorded("syncing")).data).toEqual({headSlot: 0, syncDistance: 18, isSyncing: true, isOptimistic: false, elOffline: false});
  });

  it("reads its genesis (its genesis_fork_version quirk is the validator client's business)", () => {
    const {data} = read("getGenesis", recorded("genesis"));
    expect(Buffer.from(data.genesisForkVersion).toString("hex")).toBe("02000001");
  });

  it("its framework's error bodies keep their message: a missing route and a missing block", () => {
    for (const [name, operationId, message] of [
      ["produceBlockV3Missing", "produceBlockV3", "Route GET:/eth/v3/validator/blocks/1 not found"],
      ["blockMissing", "getBlockHeader", "No block found for id '0x0000000000000000000000000000000000000000000000000000000000000001'"],
    ] as const) {
      let error: unknown;
      try {
        read(operationId, recorded(name));
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ApiClientError);
      expect(error).toMatchObject({status: 404, code: 404, message});
      // only the first says the node lacks the route
      expect(isRouteMissing(error as ApiClientError)).toBe(name === "produceBlockV3Missing");
    }
  });

  it("an error body that is no {code, message} object is its own message", () => {
    const body = '[{"keyword":"required","message":"should have required property \'randao_reveal\'"}]';
    expect(() => read("produceBlockV2", {status: 400, headers: {}, body})).toThrow(body);
  });
});

describe("metadata when reading", () => {
  const checkpoint = {epoch: "1", root: "0x" + "11".repeat(32)};
  const checkpoints = {previous_justified: checkpoint, current_justified: checkpoint, finalized: checkpoint};
  const duty = {pubkey: "0x" + "22".repeat(48), validator_index: "3", slot: "9"};

  it("unknown top-level keys are ignored", () => {
    const {meta} = read("getStateFinalityCheckpoints", json({data: checkpoints, execution_optimistic: true, finalized: true, dependent_root: "x", future_flag: 1}));
    expect(meta).toEqual({executionOptimistic: true, finalized: true});
  });

  it("a missing required field is an error naming it and the route", () => {
    const answer = json({data: [duty], execution_optimistic: false});
    expect(() => read("getProposerDuties", answer)).toThrow(
      'getProposerDuties (GET /eth/v1/validator/duties/proposer/{epoch}): the answer has no "dependent_root" (nor an Eth-Dependent-Root header)'
    );
  });

  it("a present field of the wrong type is still refused, naming the route", () => {
    expect(() => read("getStateFinalityCheckpoints", json({data: checkpoints, execution_optimistic: "no", finalized: false}))).toThrow(
      "getStateFinalityCheckpoints (GET /eth/v1/beacon/states/{state_id}/finality_checkpoints): Invalid execution_optimistic in response: no"
    );
  });

  it("the version from the Eth-Consensus-Version header when the JSON body leaves it out; neither is an error", () => {
    const block = JSON.parse(recorded("blockV2").body as string);
    delete block.version;
    expect(read("getBlockV2", json(block, {"eth-consensus-version": "bellatrix"})).meta.version).toBe("bellatrix");
    expect(() => read("getBlockV2", json(block))).toThrow('getBlockV2 (GET /eth/v2/beacon/blocks/{block_id}): the answer has no "version" (nor an Eth-Consensus-Version header)');
  });

  it("an SSZ answer without a required header is an error naming it", () => {
    const res: WireResponse = {status: 200, headers: {"content-type": "application/octet-stream"}, body: new Uint8Array(8)};
    expect(() => read("getBlockV2", res)).toThrow("getBlockV2 (GET /eth/v2/beacon/blocks/{block_id}): the answer has no Eth-Consensus-Version header");
  });
});
