import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import {mkdtemp, rm} from "node:fs/promises";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {PublicKey, Signature, verify} from "@chainsafe/blst";
import {BitArray, type Type} from "@chainsafe/ssz";
import {createBeaconConfig, type BeaconConfig} from "@lodestar/config";
import {
  DOMAIN_AGGREGATE_AND_PROOF,
  DOMAIN_BEACON_ATTESTER,
  DOMAIN_BEACON_PROPOSER,
  DOMAIN_CONTRIBUTION_AND_PROOF,
  DOMAIN_RANDAO,
  DOMAIN_SELECTION_PROOF,
  DOMAIN_SYNC_COMMITTEE,
  DOMAIN_SYNC_COMMITTEE_SELECTION_PROOF,
} from "@lodestar/params";
import {computeDomain, computeSigningRoot} from "@lodestar/state-transition";
import {ssz, type DomainType} from "@lodestar/types";
import {devChainConfig} from "../../../src/config/chainConfig.ts";
import {ValidatorSigner} from "../../../src/validator/signer.ts";
import {SlashingProtection, SlashingProtectionError} from "../../../src/validator/slashingProtection.ts";

// phase0 at epoch 0, altair from epoch 1, electra from epoch 2 (minimal preset: 8 slots per epoch).
const chainConfig = devChainConfig({secondsPerSlot: 6, genesisFork: "phase0", forkEpochs: {altair: 1, bellatrix: 2, capella: 2, deneb: 2, electra: 2}});
const genesisValidatorsRoot = new Uint8Array(32).fill(7);

describe("ValidatorSigner", () => {
  let dir: string;
  let protection: SlashingProtection;
  let config: BeaconConfig;
  let signer: ValidatorSigner;
  let pubkey: Uint8Array;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "signer-"));
    protection = await SlashingProtection.open(dir);
    config = createBeaconConfig(chainConfig, genesisValidatorsRoot);
    signer = ValidatorSigner.fromInteropIndices(config, [3, 4], protection);
    pubkey = signer.pubkeys[1];
  });

  afterAll(async () => {
    await protection.close();
    await rm(dir, {recursive: true, force: true});
  });

  /** Whether `signature` verifies for `value` under `domainType` with the given fork version. */
  function verifies<T>(type: Type<T>, value: T, domainType: DomainType, forkVersion: Uint8Array, signature: Uint8Array): boolean {
    const signingRoot = computeSigningRoot(type, value, computeDomain(domainType, forkVersion, genesisValidatorsRoot));
    return verify(signingRoot, PublicKey.fromBytes(pubkey), Signature.fromBytes(signature));
  }

  it("derives the interop public keys in the order given", () => {
    expect(signer.pubkeys).toHaveLength(2);
    expect(Buffer.from(signer.pubkeys[0]).equals(Buffer.from(pubkey))).toBe(false);
  });

  it("signs randao reveals with the fork version of the reveal's epoch", async () => {
    const atPhase0 = await signer.signRandaoReveal(pubkey, 0);
    const atAltair = await signer.signRandaoReveal(pubkey, 1);
    expect(verifies(ssz.Epoch, 0, DOMAIN_RANDAO, config.GENESIS_FORK_VERSION, atPhase0)).toBe(true);
    expect(verifies(ssz.Epoch, 1, DOMAIN_RANDAO, config.ALTAIR_FORK_VERSION, atAltair)).toBe(true);
    expect(verifies(ssz.Epoch, 1, DOMAIN_RANDAO, config.GENESIS_FORK_VERSION, atAltair)).toBe(false);
  });

  it("signs blocks as the block's fork type under DOMAIN_BEACON_PROPOSER, and refuses a slashable one", async () => {
    // Fresh objects each time: ssz caches a struct's root on the object, and a spread copy would carry it along.
    const makeBlock = (parentByte: number) => ({...ssz.altair.BeaconBlock.defaultValue(), slot: 9, proposerIndex: 4, parentRoot: new Uint8Array(32).fill(parentByte)});
    const block = makeBlock(0);
    const signed = await signer.signBlock(pubkey, block);
    expect(signed.message).toBe(block);
    expect(verifies(ssz.altair.BeaconBlock, block, DOMAIN_BEACON_PROPOSER, config.ALTAIR_FORK_VERSION, signed.signature)).toBe(true);
    // Same block again is fine; another block at that slot is not.
    await signer.signBlock(pubkey, makeBlock(0));
    await expect(signer.signBlock(pubkey, makeBlock(1))).rejects.toBeInstanceOf(SlashingProtectionError);
  });

  it("signs attestation data with the target epoch's fork and records it", async () => {
    const makeData = (headByte: number) => ({
      slot: 17,
      index: 0,
      beaconBlockRoot: new Uint8Array(32).fill(headByte),
      source: {epoch: 1, root: new Uint8Array(32)},
      target: {epoch: 2, root: new Uint8Array(32).fill(3)},
    });
    const data = makeData(2);
    const signature = await signer.signAttestationData(pubkey, data);
    expect(verifies(ssz.phase0.AttestationData, data, DOMAIN_BEACON_ATTESTER, config.ELECTRA_FORK_VERSION, signature)).toBe(true);
    expect(await signer.signAttestationData(pubkey, makeData(2))).toEqual(signature);
    await expect(signer.signAttestationData(pubkey, makeData(9))).rejects.toBeInstanceOf(SlashingProtectionError);
  });

  it("signs aggregation selection proofs and aggregates (phase0 and electra containers)", async () => {
    const proof = await signer.signSelectionProof(pubkey, 3);
    expect(verifies(ssz.Slot, 3, DOMAIN_SELECTION_PROOF, config.GENESIS_FORK_VERSION, proof)).toBe(true);

    const phase0Aggregate = {...ssz.phase0.Attestation.defaultValue(), aggregationBits: BitArray.fromSingleBit(4, 1)};
    phase0Aggregate.data = {...phase0Aggregate.data, slot: 3};
    const phase0Message = {aggregatorIndex: 4, aggregate: phase0Aggregate, selectionProof: proof};
    const signedPhase0 = await signer.signAggregateAndProof(pubkey, phase0Message);
    expect(verifies(ssz.phase0.AggregateAndProof, phase0Message, DOMAIN_AGGREGATE_AND_PROOF, config.GENESIS_FORK_VERSION, signedPhase0.signature)).toBe(true);

    const electraAggregate = {...ssz.electra.Attestation.defaultValue(), aggregationBits: BitArray.fromSingleBit(4, 1), committeeBits: BitArray.fromSingleBit(4, 0)};
    electraAggregate.data = {...electraAggregate.data, slot: 20};
    const electraMessage = {aggregatorIndex: 4, aggregate: electraAggregate, selectionProof: await signer.signSelectionProof(pubkey, 20)};
    const signedElectra = await signer.signAggregateAndProof(pubkey, electraMessage);
    expect(verifies(ssz.electra.AggregateAndProof, electraMessage, DOMAIN_AGGREGATE_AND_PROOF, config.ELECTRA_FORK_VERSION, signedElectra.signature)).toBe(true);
  });

  it("signs sync committee messages, selection proofs and contributions", async () => {
    const root = new Uint8Array(32).fill(5);
    const message = await signer.signSyncCommitteeMessage(pubkey, 10, root);
    expect(verifies(ssz.Root, root, DOMAIN_SYNC_COMMITTEE, config.ALTAIR_FORK_VERSION, message)).toBe(true);

    const selectionProof = await signer.signSyncSelectionProof(pubkey, 10, 2);
    const selectionData = {slot: 10, subcommitteeIndex: 2};
    expect(verifies(ssz.altair.SyncAggregatorSelectionData, selectionData, DOMAIN_SYNC_COMMITTEE_SELECTION_PROOF, config.ALTAIR_FORK_VERSION, selectionProof)).toBe(true);

    const contribution = {...ssz.altair.SyncCommitteeContribution.defaultValue(), slot: 10, subcommitteeIndex: 2, beaconBlockRoot: root};
    const cap = {aggregatorIndex: 4, contribution, selectionProof};
    const signed = await signer.signContributionAndProof(pubkey, cap);
    expect(verifies(ssz.altair.ContributionAndProof, cap, DOMAIN_CONTRIBUTION_AND_PROOF, config.ALTAIR_FORK_VERSION, signed.signature)).toBe(true);
  });

  it("refuses to sign for a key it does not hold", async () => {
    await expect(signer.signRandaoReveal(new Uint8Array(48), 0)).rejects.toThrow(/no secret key/);
  });
});
