import {describe, it, expect, beforeEach, afterEach} from "@jest/globals";
import {ssz} from "@lodestar/types";
import {BeaconDb} from "../../../src/db/beaconDb.ts";
import {ChainMismatchError, chainFingerprint} from "../../../src/db/chainFingerprint.ts";
import {devChainConfig} from "../../../src/config/chainConfig.ts";
import {createInteropGenesisState} from "../../../src/chain/genesis.ts";
import {makeTempDir, removeDir, testConfig, testRoot} from "./helpers.ts";

describe("db reopen", () => {
  let dir: string;

  beforeEach(async () => {
    dir = await makeTempDir();
  });

  afterEach(async () => {
    await removeDir(dir);
  });

  it("reads back after close and reopen what was written through the repositories", async () => {
    const genesis = createInteropGenesisState(testConfig, 8, 1_600_000_000);
    const block = ssz.phase0.SignedBeaconBlock.defaultValue();
    block.message.slot = 1;
    block.message.stateRoot = genesis.hashTreeRoot();
    const root = ssz.phase0.BeaconBlock.hashTreeRoot(block.message);

    const db = await BeaconDb.open(dir, testConfig);
    await db.batch([
      db.blocks.putOp(root, block),
      db.canonicalBlocks.putOp(1, root),
      db.stateArchive.putOp(genesis),
      db.chainMeta.genesisTime.putOp(genesis.genesisTime),
      db.chainMeta.genesisValidatorsRoot.putOp(genesis.genesisValidatorsRoot),
      db.chainMeta.headRoot.putOp(root),
    ]);
    await db.chainMeta.graffiti.put(new Uint8Array(32).fill(1));
    await db.close();
    await db.close(); // closing twice is harmless

    const reopened = await BeaconDb.open(dir, testConfig);
    try {
      expect(ssz.phase0.SignedBeaconBlock.equals((await reopened.blocks.get(root)) as never, block)).toBe(true);
      expect(await reopened.canonicalBlocks.getAtOrBefore(5)).toEqual({slot: 1, blockRoot: root});
      const state = await reopened.stateArchive.getByRoot(genesis.hashTreeRoot());
      expect(state?.hashTreeRoot()).toEqual(genesis.hashTreeRoot());
      expect(await reopened.stateArchive.getLatestBytes()).toEqual(genesis.serialize());
      expect(await reopened.chainMeta.genesisTime.get()).toBe(1_600_000_000);
      expect(await reopened.chainMeta.genesisValidatorsRoot.get()).toEqual(genesis.genesisValidatorsRoot);
      expect(await reopened.chainMeta.headRoot.get()).toEqual(root);
      expect(await reopened.chainMeta.graffiti.get()).toEqual(new Uint8Array(32).fill(1));
    } finally {
      await reopened.close();
    }
  });

  it("refuses a data dir written for another fork schedule", async () => {
    const db = await BeaconDb.open(dir, testConfig);
    await db.canonicalBlocks.put(0, testRoot(0));
    await db.close();

    const other = devChainConfig({secondsPerSlot: 6, genesisFork: "phase0", forkEpochs: {altair: 2}});
    await expect(BeaconDb.open(dir, other)).rejects.toThrow(ChainMismatchError);
    // the refused open released the database: the right config still opens it
    const again = await BeaconDb.open(dir, testConfig);
    expect(await again.canonicalBlocks.get(0)).toEqual(testRoot(0));
    await again.close();
  });

  it("fingerprints network, preset and scheduled forks only", () => {
    const fingerprint = JSON.parse(chainFingerprint(testConfig));
    expect(fingerprint.network).toBe("dev");
    expect(fingerprint.preset).toBe("minimal");
    expect(fingerprint.forks[0]).toMatch(/^phase0@0:0x[0-9a-f]{8}$/);
    expect(fingerprint.forks.at(-1)).toMatch(/^electra@5:/);
    expect(fingerprint.forks.some((f: string) => f.startsWith("fulu"))).toBe(false);
  });
});
