import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import {DOMAIN_BEACON_PROPOSER, DOMAIN_RANDAO} from "@lodestar/params";
import {computeEpochAtSlot, computeSigningRoot, interopSecretKey} from "@lodestar/state-transition";
import {ssz, type BeaconBlock, type SignedBeaconBlock} from "@lodestar/types";
import {toRootHex} from "@lodestar/utils";
import {mkdtempSync, rmSync} from "node:fs";
import {tmpdir} from "node:os";
import {join} from "node:path";
import type {BeaconChain} from "../../../src/chain/beaconChain.ts";
import {initChain} from "../../../src/chain/init.ts";
import {BlockError} from "../../../src/chain/interface.ts";
import {Clock} from "../../../src/clock/clock.ts";
import {devChainConfig} from "../../../src/config/chainConfig.ts";
import {BeaconDb} from "../../../src/db/beaconDb.ts";
import {MockExecutionEngine} from "../../../src/execution/mockEngine.ts";

const SECONDS_PER_SLOT = 2;

describe("block import", () => {
  const dir = mkdtempSync(join(tmpdir(), "bg-chain-"));
  let db: BeaconDb;
  let chain: BeaconChain;
  const chainConfig = devChainConfig({secondsPerSlot: SECONDS_PER_SLOT, genesisFork: "fulu", forkEpochs: {}});
  const types = ssz.fulu;

  beforeAll(async () => {
    db = await BeaconDb.open(join(dir, "beacon"), chainConfig);
    const genesisTime = Math.floor(Date.now() / 1000) - 10 * SECONDS_PER_SLOT;
    chain = await initChain(
      chainConfig,
      db,
      new MockExecutionEngine(),
      (t) => new Clock(t, SECONDS_PER_SLOT, 8),
      {validatorCount: 64, genesisTime},
      {graffiti: () => new Uint8Array(32), feeRecipientOf: () => new Uint8Array(20)}
    );
  }, 60_000);

  afterAll(async () => {
    await chain.close();
    await db.close();
    rmSync(dir, {recursive: true, force: true});
  });

  function sign(block: BeaconBlock, key = interopSecretKey(block.proposerIndex)): SignedBeaconBlock {
    const domain = chain.config.getDomain(block.slot, DOMAIN_BEACON_PROPOSER);
    return {message: block, signature: key.sign(computeSigningRoot(types.BeaconBlock, block as never, domain)).toBytes()};
  }

  async function produce(slot: number): Promise<BeaconBlock> {
    const proposer = (await chain.getHeadStateAtEpoch(computeEpochAtSlot(slot))).epochCtx.getBeaconProposer(slot);
    const randaoDomain = chain.config.getDomain(slot, DOMAIN_RANDAO);
    const randaoReveal = interopSecretKey(proposer)
      .sign(computeSigningRoot(ssz.Epoch, computeEpochAtSlot(slot), randaoDomain))
      .toBytes();
    const {block} = await chain.produceBlock({slot, randaoReveal});
    return block;
  }

  /** A fresh copy (ssz caches roots on objects, so edits must not touch the original). */
  function copy(block: BeaconBlock): BeaconBlock {
    return types.BeaconBlock.fromJson(types.BeaconBlock.toJson(block as never)) as BeaconBlock;
  }

  async function expectRejected(signed: SignedBeaconBlock, code: string): Promise<void> {
    const headBefore = toRootHex(chain.getHead().blockRoot);
    const root = types.BeaconBlock.hashTreeRoot(signed.message as never);
    const error = await chain.importBlock(signed).then(
      () => null,
      (e: unknown) => e
    );
    expect(error).toBeInstanceOf(BlockError);
    expect((error as BlockError).code).toBe(code);
    expect((error as BlockError).message.length).toBeGreaterThan(code.length + 5);
    expect(toRootHex(chain.getHead().blockRoot)).toBe(headBefore);
    expect(await db.blocks.has(root)).toBe(false);
    expect(chain.forkChoice.hasBlock(toRootHex(root))).toBe(false);
  }

  it("imports a produced and signed block, which becomes the head", async () => {
    const slot = 3;
    const signed = sign(await produce(slot));
    const imported = await chain.importBlock(signed);
    expect(imported.isHead).toBe(true);
    expect(chain.getHead().slot).toBe(slot);
    expect(await db.blocks.has(imported.blockRoot)).toBe(true);
    await expect(chain.importBlock(signed)).rejects.toMatchObject({code: "ALREADY_KNOWN"});
  });

  it("refuses to produce a block for a slot the head has reached (the API's 400), not with a state-transition error", async () => {
    // the REST handler checks the slot against the head, then waits for imports in flight: the head can reach the slot meanwhile
    await expect(chain.produceBlock({slot: chain.getHead().slot, randaoReveal: new Uint8Array(96)})).rejects.toMatchObject({name: "BlockError", code: "NOT_LATER_THAN_PARENT"});
  });

  describe("rejects bad blocks with a reason, changing nothing", () => {
    let valid: BeaconBlock;
    beforeAll(async () => {
      valid = await produce(4);
    });

    it("wrong signature", async () => {
      await expectRejected(sign(copy(valid), interopSecretKey(63 - valid.proposerIndex)), "INVALID_SIGNATURE");
    });

    it("wrong proposer", async () => {
      const block = copy(valid);
      block.proposerIndex = (block.proposerIndex + 1) % 64;
      await expectRejected(sign(block), "INCORRECT_PROPOSER");
    });

    it("wrong state root", async () => {
      const block = copy(valid);
      block.stateRoot = new Uint8Array(32).fill(0xab);
      await expectRejected(sign(block), "INVALID_STATE_ROOT");
    });

    it("unknown parent", async () => {
      const block = copy(valid);
      block.parentRoot = new Uint8Array(32).fill(0xcd);
      await expectRejected(sign(block), "PARENT_UNKNOWN");
    });

    it("a block from the future", async () => {
      const block = copy(valid);
      block.slot = chain.currentSlot() + 3;
      await expectRejected(sign(block), "FUTURE_SLOT");
    });

    it("and still imports the valid block afterwards", async () => {
      const imported = await chain.importBlock(sign(valid));
      expect(imported.isHead).toBe(true);
    });
  });
});
