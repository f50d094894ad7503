import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import {mkdtemp, rm} from "node:fs/promises";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {createBeaconConfig} from "@lodestar/config";
import {ssz} from "@lodestar/types";
import {devChainConfig} from "../../../src/config/chainConfig.ts";
import {ValidatorSigner} from "../../../src/validator/signer.ts";
import {SlashingProtection} from "../../../src/validator/slashingProtection.ts";

const chainConfig = devChainConfig({secondsPerSlot: 6, genesisFork: "phase0", forkEpochs: {}});

/** What LevelDB rejects a write with when the disk is full. */
function noSpace(): Error {
  return Object.assign(new Error("IO error: /data/validator/slashing-protection/000005.log: No space left on device"), {code: "LEVEL_IO_ERROR"});
}

/**
 * Disk full, by a storage-layer failpoint (a tmpfs cannot be mounted here): the slashing
 * protection database's writes fail with ENOSPC, as LevelDB reports it.
 */
describe("disk full (storage failpoint): the validator never signs what it could not record", () => {
  let dir: string;
  let protection: SlashingProtection;
  let signer: ValidatorSigner;
  let pubkey: Uint8Array;
  let level: {put: (...args: unknown[]) => Promise<void>};
  let put: (...args: unknown[]) => Promise<void>;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "disk-full-signing-"));
    protection = await SlashingProtection.open(dir);
    signer = ValidatorSigner.fromInteropIndices(createBeaconConfig(chainConfig, new Uint8Array(32).fill(7)), [1], protection);
    pubkey = signer.pubkeys[0];
    level = (protection as unknown as {db: typeof level}).db;
    put = level.put.bind(level);
  });

  afterAll(async () => {
    level.put = put;
    await protection.close();
    await rm(dir, {recursive: true, force: true});
  });

  it("refuses to sign a block or an attestation while the record cannot be written, and signs again once it can", async () => {
    const block = ssz.phase0.BeaconBlock.defaultValue();
    block.slot = 5;
    const data = ssz.phase0.AttestationData.defaultValue();
    data.slot = 5;
    data.target.epoch = 1;
    level.put = () => Promise.reject(noSpace());
    await expect(signer.signBlock(pubkey, block)).rejects.toThrow("No space left on device");
    await expect(signer.signAttestationData(pubkey, data)).rejects.toThrow("No space left on device");

    // space is back: nothing was recorded, so a different block at the same slot is not a double proposal
    level.put = put;
    const other = ssz.phase0.BeaconBlock.defaultValue();
    other.slot = 5;
    other.proposerIndex = 1;
    expect((await signer.signBlock(pubkey, other)).signature).toHaveLength(96);
    expect(await signer.signAttestationData(pubkey, data)).toHaveLength(96);
    // and what was signed is recorded: the first block is now refused
    await expect(signer.signBlock(pubkey, block)).rejects.toThrow();
  });
});
