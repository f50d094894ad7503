import {describe, it, expect, beforeEach, afterEach} from "@jest/globals";
import {ssz, type SignedBeaconBlock} from "@lodestar/types";
import {BeaconDb} from "../../../src/db/beaconDb.ts";
import {slotOfSignedBlockBytes} from "../../../src/db/blocks.ts";
import {slotOfStateBytes} from "../../../src/db/stateArchive.ts";
import {createInteropGenesisState} from "../../../src/chain/genesis.ts";
import {ELECTRA_SLOT, makeTempDir, removeDir, testConfig, testRoot} from "./helpers.ts";

function phase0Block(slot: number): SignedBeaconBlock {
  const block = ssz.phase0.SignedBeaconBlock.defaultValue();
  block.message.slot = slot;
  block.message.proposerIndex = 5;
  block.signature = new Uint8Array(96).fill(7);
  return block;
}

function electraBlock(slot: number): SignedBeaconBlock {
  const block = ssz.electra.SignedBeaconBlock.defaultValue();
  block.message.slot = slot;
  block.message.body.graffiti = new Uint8Array(32).fill(9);
  return block;
}

function blockRoot(block: SignedBeaconBlock): Uint8Array {
  return testConfig.getForkTypes(block.message.slot).BeaconBlock.hashTreeRoot(block.message as never);
}

/** A phase0 state view at `slot` (its contents do not matter for key-level tests). */
function phase0StateAt(slot: number) {
  const state = ssz.phase0.BeaconState.defaultViewDU();
  state.slot = slot;
  state.commit();
  return state;
}

function electraStateAt(slot: number, genesisTime: number) {
  const state = ssz.electra.BeaconState.defaultViewDU();
  state.slot = slot;
  state.genesisTime = genesisTime;
  state.commit();
  return state;
}

describe("db repositories", () => {
  let dir: string;
  let db: BeaconDb;

  beforeEach(async () => {
    dir = await makeTempDir();
    db = await BeaconDb.open(dir, testConfig);
  });

  afterEach(async () => {
    await db.close();
    await removeDir(dir);
  });

  describe("blocks", () => {
    it("stores blocks by root and reads each back with the type of its slot's fork", async () => {
      const early = phase0Block(3);
      const late = electraBlock(ELECTRA_SLOT + 1);
      await db.blocks.put(blockRoot(early), early);
      await db.blocks.put(blockRoot(late), late);

      const readEarly = await db.blocks.get(blockRoot(early));
      const readLate = await db.blocks.get(blockRoot(late));
      expect(ssz.phase0.SignedBeaconBlock.equals(readEarly as never, early as never)).toBe(true);
      expect(ssz.electra.SignedBeaconBlock.equals(readLate as never, late as never)).toBe(true);
      expect((readLate as ReturnType<typeof electraBlock>).message.body).toHaveProperty("executionRequests");
      expect(await db.blocks.getBytes(blockRoot(late))).toEqual(ssz.electra.SignedBeaconBlock.serialize(late as never));
      expect(await db.blocks.has(blockRoot(early))).toBe(true);
    });

    it("returns null for an unknown root", async () => {
      expect(await db.blocks.get(testRoot(1))).toBeNull();
      expect(await db.blocks.getBytes(testRoot(1))).toBeNull();
      expect(await db.blocks.has(testRoot(1))).toBe(false);
    });

    it("reads the slot from serialized block bytes", () => {
      expect(slotOfSignedBlockBytes(ssz.electra.SignedBeaconBlock.serialize(electraBlock(123456) as never))).toBe(123456);
    });

    it("deletes blocks by roots (abandoned forks) and leaves the others", async () => {
      const blocks = [1, 2, 3, 4].map(phase0Block);
      await db.batch(blocks.map((b) => db.blocks.putOp(blockRoot(b), b)));
      await db.blocks.deleteMany([blockRoot(blocks[1]), blockRoot(blocks[3])]);
      const present = await Promise.all(blocks.map((b) => db.blocks.has(blockRoot(b))));
      expect(present).toEqual([true, false, true, false]);
    });
  });

  describe("canonical block index", () => {
    beforeEach(async () => {
      await db.batch([5, 6, 8, 16].map((slot) => db.canonicalBlocks.putOp(slot, testRoot(slot))));
    });

    it("gets the root at a slot, null for an empty slot", async () => {
      expect(await db.canonicalBlocks.get(6)).toEqual(testRoot(6));
      expect(await db.canonicalBlocks.get(7)).toBeNull();
    });

    it("finds the latest indexed slot at or before a slot", async () => {
      expect(await db.canonicalBlocks.getAtOrBefore(7)).toEqual({slot: 6, blockRoot: testRoot(6)});
      expect(await db.canonicalBlocks.getAtOrBefore(8)).toEqual({slot: 8, blockRoot: testRoot(8)});
      expect(await db.canonicalBlocks.getAtOrBefore(1000)).toEqual({slot: 16, blockRoot: testRoot(16)});
      expect(await db.canonicalBlocks.getAtOrBefore(Infinity)).toEqual({slot: 16, blockRoot: testRoot(16)});
      expect(await db.canonicalBlocks.getAtOrBefore(4)).toBeNull();
    });

    it("orders slots numerically across byte boundaries and lists a range", async () => {
      await db.canonicalBlocks.put(256, testRoot(256));
      await db.canonicalBlocks.put(255, testRoot(255));
      expect((await db.canonicalBlocks.getAtOrBefore(300))?.slot).toBe(256);
      expect((await db.canonicalBlocks.getRange(6, 255)).map((e) => e.slot)).toEqual([6, 8, 16, 255]);
    });

    it("deletes an entry", async () => {
      await db.batch([db.canonicalBlocks.deleteOp(8)]);
      expect(await db.canonicalBlocks.get(8)).toBeNull();
      expect((await db.canonicalBlocks.getAtOrBefore(8))?.slot).toBe(6);
    });
  });

  describe("hot block index", () => {
    it("lists blocks in slot order with what the engine said of their payloads, changed in place", async () => {
      const [a, b, c] = [testRoot(1), testRoot(2), testRoot(3)];
      await db.batch([db.hotBlocks.putOp(300, c, "optimistic"), db.hotBlocks.putOp(2, a), db.hotBlocks.putOp(256, b, "optimistic")]);
      expect(await db.hotBlocks.getAll()).toEqual([
        {slot: 2, blockRoot: a, validity: "valid"},
        {slot: 256, blockRoot: b, validity: "optimistic"},
        {slot: 300, blockRoot: c, validity: "optimistic"},
      ]);
      await db.batch([db.hotBlocks.putOp(256, b, "valid"), db.hotBlocks.putOp(300, c, "invalid")]);
      expect((await db.hotBlocks.getAll()).map((e) => e.validity)).toEqual(["valid", "valid", "invalid"]);
      await db.batch([db.hotBlocks.deleteOp(2, a)]);
      expect((await db.hotBlocks.getAll()).map((e) => e.slot)).toEqual([256, 300]);
    });
  });

  describe("state archive", () => {
    it("stores states by slot with a root index and reads them as views or bytes", async () => {
      const genesis = createInteropGenesisState(testConfig, 8, 1_600_000_000);
      const genesisRoot = genesis.hashTreeRoot();
      const later = [ELECTRA_SLOT, ELECTRA_SLOT + 8, ELECTRA_SLOT + 16].map((slot) => electraStateAt(slot, slot));
      await db.stateArchive.put(genesis);
      await db.batch(later.map((s) => db.stateArchive.putOp(s)));

      const latest = await db.stateArchive.getLatest();
      expect(latest?.slot).toBe(ELECTRA_SLOT + 16);
      expect(latest).toHaveProperty("pendingDeposits");
      expect(slotOfStateBytes((await db.stateArchive.getLatestBytes())!)).toBe(ELECTRA_SLOT + 16);

      expect((await db.stateArchive.getAtOrBefore(ELECTRA_SLOT + 7))?.slot).toBe(ELECTRA_SLOT);
      const first = await db.stateArchive.getAtOrBefore(ELECTRA_SLOT - 1);
      expect(first?.hashTreeRoot()).toEqual(genesisRoot);
      expect(await db.stateArchive.getBytesAtOrBefore(0)).toEqual(genesis.serialize());
      expect(await db.stateArchive.get(ELECTRA_SLOT + 1)).toBeNull();

      const byRoot = await db.stateArchive.getByRoot(later[1].hashTreeRoot());
      expect(byRoot?.slot).toBe(ELECTRA_SLOT + 8);
      expect(byRoot?.hashTreeRoot()).toEqual(later[1].hashTreeRoot());
      expect(await db.stateArchive.getBytesByRoot(genesisRoot)).toEqual(genesis.serialize());
      expect(await db.stateArchive.getSlotByRoot(later[2].hashTreeRoot())).toBe(ELECTRA_SLOT + 16);
      expect(await db.stateArchive.getByRoot(testRoot(1))).toBeNull();
    });

    it("is empty before the first state", async () => {
      expect(await db.stateArchive.getLatest()).toBeNull();
      expect(await db.stateArchive.getAtOrBefore(100)).toBeNull();
    });

    it("prunes states below a slot, keeping the lowest state of every keepEvery-slot window", async () => {
      const states = [0, 8, 16, 24, 32, 40, 48, 56, 64, 72].map(phase0StateAt);
      await db.batch(states.map((s) => db.stateArchive.putOp(s)));

      expect(await db.stateArchive.prune(64, 32)).toBe(6);
      expect(await db.stateArchive.getSlots()).toEqual([0, 32, 64, 72]);
      expect(await db.stateArchive.getSlotByRoot(states[1].hashTreeRoot())).toBeNull();
      expect(await db.stateArchive.getSlotByRoot(states[4].hashTreeRoot())).toBe(32);
      // pruning again changes nothing
      expect(await db.stateArchive.pruneOps(64, 32)).toEqual([]);
    });

    it("keeps the lowest state of a window when states are not window-aligned", async () => {
      await db.batch([3, 9, 35, 36].map((slot) => db.stateArchive.putOp(phase0StateAt(slot))));
      expect(await db.stateArchive.prune(40, 32)).toBe(2);
      expect(await db.stateArchive.getSlots()).toEqual([3, 35]);
    });

    it("deletes one state with its root index entry", async () => {
      const state = phase0StateAt(8);
      await db.stateArchive.put(state);
      await db.batch([db.stateArchive.deleteOp(8, state.hashTreeRoot())]);
      expect(await db.stateArchive.getBytes(8)).toBeNull();
      expect(await db.stateArchive.getSlotByRoot(state.hashTreeRoot())).toBeNull();
    });

    it("rejects a non-positive keepEvery", async () => {
      await expect(db.stateArchive.prune(64, 0)).rejects.toThrow(/keepEvery/);
    });
  });

  describe("chain meta", () => {
    it("has typed fields that are null until set", async () => {
      const meta = db.chainMeta;
      expect(await meta.headRoot.get()).toBeNull();

      await meta.genesisTime.put(1_600_000_123);
      await meta.genesisValidatorsRoot.put(testRoot(1));
      await meta.anchorCheckpoint.put({epoch: 0, root: testRoot(2)});
      await meta.finalizedCheckpoint.put({epoch: 3, root: testRoot(3)});
      await meta.justifiedCheckpoint.put({epoch: 4, root: testRoot(4)});
      await meta.headRoot.put(testRoot(5));
      await meta.graffiti.put(new Uint8Array(32).fill(0x61));

      expect(await meta.genesisTime.get()).toBe(1_600_000_123);
      expect(await meta.genesisValidatorsRoot.get()).toEqual(testRoot(1));
      expect(await meta.anchorCheckpoint.get()).toEqual({epoch: 0, root: testRoot(2)});
      expect(await meta.finalizedCheckpoint.get()).toEqual({epoch: 3, root: testRoot(3)});
      expect(await meta.justifiedCheckpoint.get()).toEqual({epoch: 4, root: testRoot(4)});
      expect(await meta.headRoot.get()).toEqual(testRoot(5));
      expect(await meta.graffiti.get()).toEqual(new Uint8Array(32).fill(0x61));
      expect(await meta.chainFingerprint.get()).toContain('"preset":"minimal"');

      await db.batch([meta.headRoot.deleteOp()]);
      expect(await meta.headRoot.get()).toBeNull();
    });
  });

  describe("batch", () => {
    it("writes ops of several repositories together, single ops and op lists mixed", async () => {
      const block = phase0Block(7);
      const root = blockRoot(block);
      const state = phase0StateAt(7);
      await db.batch([
        db.blocks.putOp(root, block),
        db.canonicalBlocks.putOp(7, root),
        db.stateArchive.putOp(state),
        db.chainMeta.headRoot.putOp(root),
        db.chainMeta.finalizedCheckpoint.putOp({epoch: 1, root}),
      ]);
      expect(await db.blocks.has(root)).toBe(true);
      expect(await db.canonicalBlocks.get(7)).toEqual(root);
      expect(await db.stateArchive.getSlotByRoot(state.hashTreeRoot())).toBe(7);
      expect(await db.chainMeta.headRoot.get()).toEqual(root);
      expect(await db.chainMeta.finalizedCheckpoint.get()).toEqual({epoch: 1, root});
    });

    it("writes nothing when one op of the batch is invalid", async () => {
      const bad = {type: "put", key: undefined, value: new Uint8Array(1)} as never;
      await expect(db.batch([db.canonicalBlocks.putOp(1, testRoot(1)), bad])).rejects.toThrow();
      expect(await db.canonicalBlocks.get(1)).toBeNull();
    });
  });
});
