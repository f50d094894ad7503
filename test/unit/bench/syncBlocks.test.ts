import {describe, it, expect} from "@jest/globals";
import {mkdtempSync, rmSync} from "node:fs";
import {tmpdir} from "node:os";
import {join} from "node:path";
import type {bellatrix} from "@lodestar/types";
import {ssz} from "@lodestar/types";
import {createInteropGenesisState} from "../../../src/chain/genesis.ts";
import {devChainConfig} from "../../../src/config/chainConfig.ts";
import {SCALE_SECONDS_PER_SLOT, withGenesisTime} from "../../../bench/scaleState.ts";
import {freshChain} from "../../../bench/segment.ts";
import {SYNC_GENESIS_TIME, syncBlocks} from "../../../bench/syncBlocks.ts";

// bench:sync --scale's block generator on the bellatrix interop genesis of 64 validators (minimal
// preset: 2 committees of 4 a slot, a sync committee of 32), its blocks imported by the node's
// own chain with every signature checked
describe("bench:sync --scale's blocks", () => {
  it("carry the last two slots' committees in full and a full sync aggregate, signed by summed keys, and import with every signature checked", async () => {
    const config = devChainConfig({secondsPerSlot: SCALE_SECONDS_PER_SLOT, genesisFork: "bellatrix", forkEpochs: {}});
    const state = createInteropGenesisState(config, 64, SYNC_GENESIS_TIME).serialize();
    const dir = mkdtempSync(join(tmpdir(), "sync-blocks-test-"));
    const prefix = join(dir, "blocks");
    const count = 3;
    try {
      const blocks = await syncBlocks({state, count, prefix, log: () => undefined});
      // kept: read back the same bytes, and a shorter segment is the first blocks
      expect(await syncBlocks({state, count, prefix, log: () => undefined})).toEqual(blocks);
      expect(await syncBlocks({state, count: 2, prefix, log: () => undefined})).toEqual(blocks.slice(0, 2));

      const segment = {genesis: withGenesisTime(state, SYNC_GENESIS_TIME), genesisTime: SYNC_GENESIS_TIME, blocks};
      const now = () => (SYNC_GENESIS_TIME + (count + 1) * SCALE_SECONDS_PER_SLOT) * 1000;
      const {chain, blocks: decoded, close} = await freshChain(segment, {genesisFork: "bellatrix", secondsPerSlot: SCALE_SECONDS_PER_SLOT, now});
      try {
        const committeesPerSlot = chain.getHeadState().epochCtx.getCommitteeCountPerSlot(0);
        expect(committeesPerSlot).toBe(2);
        decoded.forEach((signed, i) => {
          const block = signed.message as bellatrix.BeaconBlock;
          expect(block.slot).toBe(i + 1);
          // slot 0's committees in block 1, then those of the two slots before each block
          const slots = block.body.attestations.map((a) => a.data.slot);
          expect(slots).toEqual(i === 0 ? [0, 0] : [i, i, i - 1, i - 1]);
          expect(block.body.attestations.map((a) => a.data.index)).toEqual(i === 0 ? [0, 1] : [0, 1, 0, 1]);
          for (const a of block.body.attestations) expect(a.aggregationBits.getTrueBitIndexes().length).toBe(a.aggregationBits.bitLen);
          expect(block.body.syncAggregate.syncCommitteeBits.getTrueBitIndexes().length).toBe(block.body.syncAggregate.syncCommitteeBits.bitLen);
          expect(block.body.executionPayload.transactions).toEqual([]);
        });

        // another committee's aggregate signature: the block is refused for it
        const tampered = ssz.bellatrix.SignedBeaconBlock.clone(decoded[0] as bellatrix.SignedBeaconBlock);
        tampered.message.body.attestations[0].signature = tampered.message.body.attestations[1].signature;
        await expect(chain.importBlock(tampered)).rejects.toMatchObject({code: "INVALID_SIGNATURE"});
        // a sync aggregate signature of the wrong block, likewise
        const wrongSync = ssz.bellatrix.SignedBeaconBlock.clone(decoded[1] as bellatrix.SignedBeaconBlock);
        wrongSync.message.body.syncAggregate.syncCommitteeSignature = (decoded[2].message as bellatrix.BeaconBlock).body.syncAggregate.syncCommitteeSignature;

        await chain.importBlock(decoded[0]);
        await expect(chain.importBlock(wrongSync)).rejects.toMatchObject({code: "INVALID_SIGNATURE"});
        for (const block of decoded.slice(1)) await chain.importBlock(block);
        expect(chain.getHead().slot).toBe(count);
      } finally {
        await close();
      }
    } finally {
      rmSync(dir, {recursive: true, force: true});
    }
  });
});
