import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import {mkdtemp, rm} from "node:fs/promises";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {Writable} from "node:stream";
import {PublicKey, Signature, verify} from "@chainsafe/blst";
import {BitArray, type Type} from "@chainsafe/ssz";
import {chainConfigToJson, createBeaconConfig, type BeaconConfig} from "@lodestar/config";
import {DOMAIN_BEACON_ATTESTER, DOMAIN_BEACON_PROPOSER, DOMAIN_SELECTION_PROOF, type ForkName, isForkPostElectra, MAX_COMMITTEES_PER_SLOT, SLOTS_PER_EPOCH} from "@lodestar/params";
import {computeEpochAtSlot, computeSigningRoot, computeStartSlotAtEpoch, interopSecretKey, isAggregatorFromCommitteeLength} from "@lodestar/state-transition";
import {ssz} from "@lodestar/types";
import type {BeaconBlock, SignedAggregateAndProof, SignedBeaconBlock, altair, electra, phase0} from "@lodestar/types";
import {toHex} from "@lodestar/utils";
import {devChainConfig, type DevFork} from "../../../src/config/chainConfig.ts";
import {initLogging, parseLogDirective} from "../../../src/log.ts";
import type {AttesterDuty, ValidatorBeaconApi} from "../../../src/validator/beaconApi.ts";
import {startValidatorClient} from "../../../src/validator/index.ts";

const VALIDATORS = 8;
const keys = Array.from({length: VALIDATORS}, (_, i) => interopSecretKey(i));
const pubkeys = keys.map((sk) => sk.toPublicKey().toBytes());
const indexOfPubkey = new Map(pubkeys.map((pk, i) => [toHex(pk), i]));
const genesisValidatorsRoot = new Uint8Array(32).fill(0x42);
const feeRecipient = new Uint8Array(20).fill(0xfe);

/** Validator `i` attests at slot `i` of each epoch; even ones sit alone in their committee (always aggregators). */
function committeeLengthOf(validatorIndex: number): number {
  return validatorIndex % 2 === 0 ? 1 : 64;
}

/** A beacon node stand-in: every slot's proposer and attester is one of our 8 validators (validator = slot % 8). */
class FakeBeaconApi implements ValidatorBeaconApi {
  readonly config: BeaconConfig;
  readonly genesisTime: number;
  readonly blocks: SignedBeaconBlock[] = [];
  readonly attestations: (phase0.Attestation | electra.SingleAttestation)[] = [];
  readonly aggregates: SignedAggregateAndProof[] = [];
  readonly syncMessages: altair.SyncCommitteeMessage[] = [];
  readonly contributions: altair.SignedContributionAndProof[] = [];
  readonly subscriptions: {validatorIndex: number; slot: number; isAggregator: boolean}[] = [];
  readonly proposerPreparations: {validatorIndex: number; feeRecipient: Uint8Array}[] = [];
  private readonly produced = new Map<string, phase0.AttestationData>();

  constructor(fork: DevFork, genesisTime: number) {
    this.config = createBeaconConfig(devChainConfig({secondsPerSlot: 1, genesisFork: fork, forkEpochs: {}}), genesisValidatorsRoot);
    this.genesisTime = genesisTime;
  }

  async getGenesis() {
    return {genesisTime: this.genesisTime, genesisValidatorsRoot, genesisForkVersion: this.config.GENESIS_FORK_VERSION};
  }
  async getSpec() {
    return chainConfigToJson(this.config) as Record<string, string>;
  }
  async getForkSchedule() {
    return this.config.forksAscendingEpochOrder.map((f) => ({previousVersion: f.prevVersion, currentVersion: f.version, epoch: f.epoch}));
  }
  async getValidators(requested: Uint8Array[]) {
    return requested.map((pubkey) => ({index: indexOfPubkey.get(toHex(pubkey))!, pubkey, status: "active_ongoing"}));
  }
  async getProposerDuties(epoch: number) {
    const start = computeStartSlotAtEpoch(epoch);
    const duties = Array.from({length: SLOTS_PER_EPOCH}, (_, i) => ({pubkey: pubkeys[i], validatorIndex: i, slot: start + i}));
    return {dependentRoot: new Uint8Array(32), duties};
  }
  async getAttesterDuties(epoch: number, indices: number[]) {
    const duties: AttesterDuty[] = indices.map((i) => ({
      pubkey: pubkeys[i],
      validatorIndex: i,
      committeeIndex: i % 2,
      committeeLength: committeeLengthOf(i),
      committeesAtSlot: 2,
      validatorCommitteeIndex: 0,
      slot: computeStartSlotAtEpoch(epoch) + i,
    }));
    return {dependentRoot: new Uint8Array(32), duties};
  }
  async getSyncCommitteeDuties(_epoch: number, indices: number[]) {
    return indices.map((i) => ({pubkey: pubkeys[i], validatorIndex: i, validatorSyncCommitteeIndices: [i * 4]}));
  }
  async produceBlock(slot: number, randaoReveal: Uint8Array) {
    const fork = this.config.getForkName(slot);
    const block = ssz[fork].BeaconBlock.defaultValue() as BeaconBlock;
    block.slot = slot;
    block.proposerIndex = slot % SLOTS_PER_EPOCH;
    block.body.randaoReveal = randaoReveal;
    return {block, fork, blobs: {blobs: [], kzgProofs: []}};
  }
  async publishBlock(signedBlock: SignedBeaconBlock) {
    this.blocks.push(signedBlock);
  }
  async produceAttestationData(committeeIndex: number, slot: number) {
    const epoch = computeEpochAtSlot(slot);
    const data = {
      slot,
      index: committeeIndex,
      beaconBlockRoot: new Uint8Array(32).fill(slot % 256),
      source: {epoch: epoch - 1, root: new Uint8Array(32).fill(1)},
      target: {epoch, root: new Uint8Array(32).fill(2)},
    };
    this.produced.set(toHex(ssz.phase0.AttestationData.hashTreeRoot(data)), data);
    return data;
  }
  async submitAttestations(attestations: (phase0.Attestation | electra.SingleAttestation)[]) {
    this.attestations.push(...attestations);
  }
  async getAggregatedAttestation(root: Uint8Array, slot: number, committeeIndex: number) {
    const data = this.produced.get(toHex(root));
    if (!data) throw new Error("unknown attestation data");
    const fork = this.config.getForkName(slot);
    const aggregationBits = BitArray.fromSingleBit(committeeLengthOf(slot % SLOTS_PER_EPOCH), 0);
    const signature = new Uint8Array(96);
    const attestation = isForkPostElectra(fork)
      ? {aggregationBits, data, signature, committeeBits: BitArray.fromSingleBit(MAX_COMMITTEES_PER_SLOT, committeeIndex)}
      : {aggregationBits, data, signature};
    return {attestation, fork};
  }
  async publishAggregateAndProofs(signed: SignedAggregateAndProof[]) {
    this.aggregates.push(...signed);
  }
  async prepareBeaconCommitteeSubnet(subscriptions: {validatorIndex: number; slot: number; isAggregator: boolean}[]) {
    this.subscriptions.push(...subscriptions);
  }
  async getBlockRoot() {
    return new Uint8Array(32).fill(9);
  }
  async submitSyncCommitteeMessages(messages: altair.SyncCommitteeMessage[]) {
    this.syncMessages.push(...messages);
  }
  async produceSyncCommitteeContribution(slot: number, subcommitteeIndex: number, beaconBlockRoot: Uint8Array) {
    return {slot, beaconBlockRoot, subcommitteeIndex, aggregationBits: BitArray.fromBitLen(8), signature: new Uint8Array(96)};
  }
  async publishContributionAndProofs(signed: altair.SignedContributionAndProof[]) {
    this.contributions.push(...signed);
  }
  async prepareBeaconProposer(registrations: {validatorIndex: number; feeRecipient: Uint8Array}[]) {
    this.proposerPreparations.push(...registrations);
  }

  /** Whether validator `i` signed `value` under `domainType` at `epoch`'s fork. */
  verifies<T>(i: number, type: Type<T>, value: T, domainType: Uint8Array, epoch: number, signature: Uint8Array): boolean {
    const signingRoot = computeSigningRoot(type, value, this.config.getDomain(computeStartSlotAtEpoch(epoch), domainType));
    return verify(signingRoot, PublicKey.fromBytes(pubkeys[i]), Signature.fromBytes(signature));
  }

  isAggregator(i: number, slot: number): boolean {
    const proof = keys[i].sign(computeSigningRoot(ssz.Slot, slot, this.config.getDomain(slot, DOMAIN_SELECTION_PROOF))).toBytes();
    return isAggregatorFromCommitteeLength(committeeLengthOf(i), proof);
  }
}

/** A node that never produces a block and fails attestation data at odd slots: the client must carry on. */
class FlakyBeaconApi extends FakeBeaconApi {
  override async produceBlock(): Promise<never> {
    throw new Error("flaky: no block");
  }
  override async produceAttestationData(committeeIndex: number, slot: number) {
    if (slot % 2 === 1) throw new Error("flaky: no attestation data");
    return super.produceAttestationData(committeeIndex, slot);
  }
}

describe("validator client duty loop", () => {
  const runs = new Map<DevFork, FakeBeaconApi>();
  let flaky: FlakyBeaconApi;
  const errorLines: string[] = [];
  let firstSlot = 0;
  let lastSlot = 0;
  let dataDir: string;

  beforeAll(async () => {
    initLogging({
      directive: parseLogDirective("INFO"),
      format: "json",
      destination: new Writable({
        write(chunk, _encoding, done) {
          for (const line of String(chunk).split("\n")) if (line && JSON.parse(line).level >= 40) errorLines.push(line);
          done();
        },
      }),
    });
    dataDir = await mkdtemp(join(tmpdir(), "vc-"));
    // Two epochs after genesis, 1-second slots; a phase0 chain and an electra chain side by side.
    const genesisTime = Math.floor(Date.now() / 1000) - 2 * SLOTS_PER_EPOCH;
    runs.set("phase0", new FakeBeaconApi("phase0", genesisTime));
    runs.set("electra", new FakeBeaconApi("electra", genesisTime));
    flaky = new FlakyBeaconApi("electra", genesisTime);
    const apis = [...runs.values(), flaky];
    const clients = await Promise.all(
      apis.map((api, k) => startValidatorClient({api, indices: keys.map((_, i) => i), dataDir: join(dataDir, String(k)), feeRecipient}))
    );
    // Slots [firstSlot, lastSlot] run whole: from the first tick to just before the tick after lastSlot.
    firstSlot = Math.floor((Date.now() / 1000 - genesisTime)) + 1;
    lastSlot = firstSlot + 2;
    await new Promise((resolve) => setTimeout(resolve, (genesisTime + lastSlot + 1) * 1000 - 60 - Date.now()));
    await Promise.all(clients.map((c) => c.stop()));
  }, 15_000);

  afterAll(async () => {
    await rm(dataDir, {recursive: true, force: true});
  });

  const slotsRun = (): number[] => Array.from({length: lastSlot - firstSlot + 1}, (_, k) => firstSlot + k);

  it.each(["phase0", "electra"] as const)("%s: proposes a signed block at each slot it has a proposer duty", (fork) => {
    const api = runs.get(fork)!;
    for (const slot of slotsRun()) {
      const blocks = api.blocks.filter((b) => b.message.slot === slot);
      expect(blocks).toHaveLength(1);
      const i = slot % SLOTS_PER_EPOCH;
      expect(blocks[0].message.proposerIndex).toBe(i);
      const blockType = ssz[api.config.getForkName(slot)].BeaconBlock as Type<BeaconBlock>;
      expect(api.verifies(i, blockType, blocks[0].message, DOMAIN_BEACON_PROPOSER, computeEpochAtSlot(slot), blocks[0].signature)).toBe(true);
    }
  });

  it.each(["phase0", "electra"] as const)("%s: attests once per slot per validator with a duty", (fork) => {
    const api = runs.get(fork)!;
    for (const slot of slotsRun()) {
      const i = slot % SLOTS_PER_EPOCH;
      const atSlot = api.attestations.filter((a) => a.data.slot === slot);
      expect(atSlot).toHaveLength(1);
      const attestation = atSlot[0];
      if (isForkPostElectra(fork as ForkName)) {
        const single = attestation as electra.SingleAttestation;
        expect(single.attesterIndex).toBe(i);
        expect(single.committeeIndex).toBe(i % 2);
        expect(single.data.index).toBe(0);
      } else {
        const att = attestation as phase0.Attestation;
        expect(att.aggregationBits.bitLen).toBe(committeeLengthOf(i));
        expect(att.aggregationBits.getTrueBitIndexes()).toEqual([0]);
        expect(att.data.index).toBe(i % 2);
      }
      expect(api.verifies(i, ssz.phase0.AttestationData, attestation.data, DOMAIN_BEACON_ATTESTER, computeEpochAtSlot(slot), attestation.signature)).toBe(true);
    }
    // Subnet subscriptions carried the aggregation selection.
    for (const sub of api.subscriptions) expect(sub.isAggregator).toBe(api.isAggregator(sub.validatorIndex, sub.slot));
  });

  it.each(["phase0", "electra"] as const)("%s: aggregates exactly when selected", (fork) => {
    const api = runs.get(fork)!;
    for (const slot of slotsRun()) {
      const i = slot % SLOTS_PER_EPOCH;
      const atSlot = api.aggregates.filter((a) => a.message.aggregate.data.slot === slot);
      expect(atSlot.map((a) => a.message.aggregatorIndex)).toEqual(api.isAggregator(i, slot) ? [i] : []);
    }
    expect(api.aggregates.length).toBeGreaterThan(0);
  });

  it("electra: sends sync committee messages and contributions every slot; phase0: none", () => {
    const electraApi = runs.get("electra")!;
    for (const slot of slotsRun()) {
      expect(electraApi.syncMessages.filter((m) => m.slot === slot).map((m) => m.validatorIndex).sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      // Minimal preset: every sync subcommittee member is an aggregator.
      expect(electraApi.contributions.filter((c) => c.message.contribution.slot === slot)).toHaveLength(VALIDATORS);
    }
    const phase0Api = runs.get("phase0")!;
    expect(phase0Api.syncMessages).toHaveLength(0);
    expect(phase0Api.contributions).toHaveLength(0);
  });

  it("announces the fee recipient and logs no warnings or errors", () => {
    for (const api of runs.values()) {
      expect(api.proposerPreparations.map((p) => p.validatorIndex).sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      expect(api.proposerPreparations.every((p) => toHex(p.feeRecipient) === toHex(feeRecipient))).toBe(true);
    }
    expect(errorLines.filter((line) => !line.includes("flaky"))).toEqual([]);
  });

  it("carries on past failing calls, logging each failure", () => {
    expect(flaky.blocks).toHaveLength(0);
    for (const slot of slotsRun()) {
      expect(flaky.attestations.filter((a) => a.data.slot === slot)).toHaveLength(slot % 2 === 0 ? 1 : 0);
      expect(flaky.syncMessages.filter((m) => m.slot === slot)).toHaveLength(VALIDATORS);
    }
    expect(errorLines.filter((line) => line.includes("flaky: no block")).length).toBeGreaterThanOrEqual(slotsRun().length);
    expect(errorLines.some((line) => line.includes("flaky: no attestation data"))).toBe(true);
  });
});
