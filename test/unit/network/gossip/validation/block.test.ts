import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import {ForkName} from "@lodestar/params";
import {toRootHex} from "@lodestar/utils";
import type {SignedBeaconBlock, electra} from "@lodestar/types";
import {type ChainEnv, copyBlock, createChainEnv} from "./chainEnv.ts";

describe("beacon_block gossip validation (fulu)", () => {
  let env: ChainEnv;
  beforeAll(async () => {
    env = await createChainEnv("fulu");
  }, 60_000);
  afterAll(() => env.close());

  const validate = (signed: SignedBeaconBlock) => env.validators.beacon_block(env.topic("beacon_block"), signed, "peer");
  const rootOf = (signed: SignedBeaconBlock) => toRootHex(env.config.getForkTypes(signed.message.slot).BeaconBlock.hashTreeRoot(signed.message));
  const resign = (signed: SignedBeaconBlock, edit: (b: electra.BeaconBlock) => void, signer?: number) => {
    const block = copyBlock(env.config, signed.message) as electra.BeaconBlock;
    edit(block);
    return env.signBlock(block, signer);
  };

  it("ACCEPTs a valid block, then imports it; the same proposer's next block at that slot is IGNOREd", async () => {
    env.setTime(1, 100);
    const signed = await env.produceBlock(1);
    expect(await validate(signed)).toMatchObject({result: "ACCEPT"});
    await env.lastGossipImport();
    expect(toRootHex(env.headRoot())).toBe(rootOf(signed));
    // an equivocating block of the same proposer and slot, validly signed
    const other = resign(signed, (b) => (b.body.graffiti = new Uint8Array(32).fill(1)));
    expect(await validate(other)).toMatchObject({result: "IGNORE", reason: expect.stringMatching(/was seen already/)});
    expect(env.chain.forkChoice.hasBlock(rootOf(other))).toBe(false);
  });

  it("IGNOREs a block from a future slot and hands it to the future-block hook; accepts one within the clock disparity", async () => {
    env.setTime(1, 1000);
    const early = await env.produceBlock(2);
    // MAXIMUM_GOSSIP_CLOCK_DISPARITY is 500 ms: 501 ms before slot 2 is too early, 500 ms is not
    env.setTime(1, 1499);
    expect(await validate(early)).toMatchObject({result: "IGNORE", reason: expect.stringMatching(/future/)});
    expect(env.futureBlocks).toEqual([early]);
    env.setTime(1, 1500);
    expect(await validate(early)).toMatchObject({result: "ACCEPT"});
    await env.lastGossipImport();
  });

  it("REJECTs a block whose proposer signature does not verify, before anything else", async () => {
    env.setTime(3, 100);
    const valid = await env.produceBlock(3);
    const forged = env.signBlock(valid.message, (valid.message.proposerIndex + 1) % 64);
    expect(await validate(forged)).toMatchObject({result: "REJECT", reason: expect.stringMatching(/invalid proposer signature/)});
    // with an unknown parent too: the signature decides, no fetch of the parent is asked for
    const orphan = resign(valid, (b) => (b.parentRoot = new Uint8Array(32).fill(0xcd)), (valid.message.proposerIndex + 1) % 64);
    expect(await validate(orphan)).toMatchObject({result: "REJECT"});
  });

  it("IGNOREs a validly signed block with an unknown parent, flagging the parent for sync", async () => {
    env.setTime(3, 100);
    const valid = await env.produceBlock(3);
    const orphan = resign(valid, (b) => (b.parentRoot = new Uint8Array(32).fill(0xcd)));
    expect(await validate(orphan)).toEqual({
      result: "IGNORE",
      reason: expect.stringMatching(/parent 0xcdcd.* is unknown/),
      parentUnknown: true,
      unknownBlockRoot: "0x" + "cd".repeat(32),
    });
  });

  it("REJECTs a block from another proposer than the slot's; what only the import can judge is forwarded, then refused there", async () => {
    env.setTime(4, 100);
    const valid = await env.produceBlock(4);
    const wrongProposer = resign(valid, (b) => (b.proposerIndex = (b.proposerIndex + 1) % 64));
    expect(await validate(wrongProposer)).toMatchObject({result: "REJECT", reason: expect.stringMatching(/is not the proposer of slot 4/)});
    // the gossip rules do not include the state root: the block is forwarded, and its import fails
    const badRoot = resign(valid, (b) => (b.stateRoot = new Uint8Array(32).fill(0xab)));
    expect(await validate(badRoot)).toMatchObject({result: "ACCEPT"});
    expect(await env.lastGossipImport()).toMatchObject({code: "INVALID_STATE_ROOT"});
    expect(env.chain.forkChoice.hasBlock(rootOf(badRoot))).toBe(false);
    // "the first block with valid signature received for the proposer for the slot" was badRoot
    expect(await validate(valid)).toMatchObject({result: "IGNORE", reason: expect.stringMatching(/was seen already/)});
  });

  it("REJECTs too many blob commitments before checking the signature, and a wrong payload timestamp before importing", async () => {
    env.setTime(5, 100);
    const valid = await env.produceBlock(5);
    const max = env.config.getMaxBlobsPerBlock(0);
    const blobby = resign(valid, (b) => (b.body.blobKzgCommitments = Array.from({length: max + 1}, () => new Uint8Array(48))), 0);
    expect(await validate(blobby)).toMatchObject({result: "REJECT", reason: expect.stringMatching(new RegExp(`${max + 1} blob KZG commitments, more than ${max}`))});
    expect(await validate(valid)).toMatchObject({result: "ACCEPT"});
    await env.lastGossipImport();
    env.setTime(6, 100);
    const next = await env.produceBlock(6);
    const lateTime = resign(next, (b) => (b.body.executionPayload.timestamp += 1));
    expect(await validate(lateTime)).toMatchObject({result: "REJECT", reason: expect.stringMatching(/execution payload timestamp \d+ is not the slot's time/)});
    expect(env.chain.forkChoice.hasBlock(rootOf(lateTime))).toBe(false);
  });

  it("IGNOREs a block known already (imported through the API or sync) and one at or before the finalized slot", async () => {
    env.setTime(7, 100);
    const imported = await env.produceBlock(7);
    await env.chain.importBlock(imported);
    expect(await validate(imported)).toMatchObject({result: "IGNORE", reason: expect.stringMatching(/already known/)});
    const atGenesis = resign(imported, (b) => (b.slot = 0));
    expect(await validate(atGenesis)).toMatchObject({result: "IGNORE", reason: expect.stringMatching(/not after the finalized slot 0/)});
  });

  it("REJECTs a block on another fork's topic", async () => {
    env.setTime(8, 100);
    const next = await env.produceBlock(8);
    const electraTopic = {...env.topic("beacon_block"), boundary: {fork: ForkName.electra, epoch: 0}};
    expect(await env.validators.beacon_block(electraTopic, next, "peer")).toMatchObject({result: "REJECT", reason: expect.stringMatching(/a fulu block .* on a electra topic/)});
    expect(await validate(next)).toMatchObject({result: "ACCEPT"});
  });
});
