import {beforeEach, describe, expect, it} from "@jest/globals";
import {signedBeaconBlockToBlinded} from "@lodestar/state-transition";
import {ssz, type SignedBeaconBlock, type electra, type fulu} from "@lodestar/types";
import request from "supertest";
import {createApp} from "../../../src/api/server/index.ts";
import {UnblindError} from "../../../src/builder/service.ts";
import {createTestContext, type TestContext} from "./testContext.ts";

/** Publishing a blinded block whose payload only the builder relay has (the relay stands in as `ctx.builder`). */
describe("publishing blinded blocks through the builder relay", () => {
  let t: TestContext;
  let app: ReturnType<typeof createApp>;
  let relay: {calls: number; answer: () => Promise<unknown>};
  /** a block with a payload the node never produced, signed */
  let full: fulu.SignedBeaconBlock;

  beforeEach(() => {
    t = createTestContext();
    relay = {calls: 0, answer: async () => "published"};
    t.ctx.builder = {
      register: () => undefined,
      unblind: async () => {
        relay.calls++;
        return (await relay.answer()) as never;
      },
    };
    app = createApp({}, t.ctx);
    full = ssz.fulu.SignedBeaconBlock.defaultValue();
    full.message.slot = 2;
    full.message.proposerIndex = 5;
    full.message.parentRoot = t.chain.genesisRoot;
    full.message.body.executionPayload.blockHash = new Uint8Array(32).fill(0x77);
    full.message.body.executionPayload.transactions = [Uint8Array.from([7, 7])];
  });

  const post = () =>
    request(app)
      .post("/eth/v2/beacon/blinded_blocks")
      .set("Eth-Consensus-Version", "fulu")
      .send(ssz.electra.SignedBlindedBeaconBlock.toJson(signedBeaconBlockToBlinded(t.chain.config, full) as electra.SignedBlindedBeaconBlock));

  it("imports the full block with the payload the relay revealed", async () => {
    relay.answer = async () => ({payload: full.message.body.executionPayload, blobsBundle: {commitments: [], proofs: [], blobs: []}});
    await post().expect(200);
    expect(relay.calls).toBe(1);
    expect(t.chain.imported.map((b: SignedBeaconBlock) => ssz.fulu.SignedBeaconBlock.toJson(b as fulu.SignedBeaconBlock))).toEqual([ssz.fulu.SignedBeaconBlock.toJson(full)]);
  });

  it("answers 202 when the relay publishes the block itself (fulu, submitBlindedBlockV2)", async () => {
    await post().expect(202);
    expect(t.chain.imported).toHaveLength(0);
  });

  it("a relay that does not reveal the payload is a 502 naming its error, and nothing is imported", async () => {
    relay.answer = async () => {
      throw new UnblindError("the builder relay did not reveal the payload of slot 2: relay error 500: payload withheld");
    };
    const res = await post().expect(502);
    expect(res.body).toEqual({code: 502, message: "Cannot publish blinded block: the builder relay did not reveal the payload of slot 2: relay error 500: payload withheld"});
    expect(t.chain.imported).toHaveLength(0);
  });
});
