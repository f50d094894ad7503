import {PublicKey, Signature, verify} from "@chainsafe/blst";
import {BitArray, type Type} from "@chainsafe/ssz";
import {chainConfigToJson, createBeaconConfig, type BeaconConfig} from "@lodestar/config";
import {DOMAIN_SELECTION_PROOF, isForkPostElectra, MAX_COMMITTEES_PER_SLOT, SLOTS_PER_EPOCH} from "@lodestar/params";
import {computeEpochAtSlot, computeSigningRoot, computeStartSlotAtEpoch, interopSecretKey, isAggregatorFromCommitteeLength} from "@lodestar/state-transition";
import {ssz} from "@lodestar/types";
import type {BeaconBlock, SignedAggregateAndProof, SignedBeaconBlock, altair, electra, phase0} from "@lodestar/types";
import {toHex} from "@lodestar/utils";
import {devChainConfig, type DevFork} from "../../../src/config/chainConfig.ts";
import type {AttesterDuty, HeadEvent, ValidatorBeaconApi} from "../../../src/validator/beaconApi.ts";

export const VALIDATORS = 8;
export const keys = Array.from({length: VALIDATORS}, (_, i) => interopSecretKey(i));
export const pubkeys = keys.map((sk) => sk.toPublicKey().toBytes());
const indexOfPubkey = new Map(pubkeys.map((pk, i) => [toHex(pk), i]));
export const genesisValidatorsRoot = new Uint8Array(32).fill(0x42);
export const feeRecipient = new Uint8Array(20).fill(0xfe);

/** Validator `i` attests at slot `i` of each epoch; even ones sit alone in their committee (always aggregators). */
export function committeeLengthOf(validatorIndex: number): number {
  return validatorIndex % 2 === 0 ? 1 : 64;
}

/** A beacon node stand-in: every slot's proposer and attester is one of our 8 validators (validator = slot % 8). */
export class FakeBeaconApi implements ValidatorBeaconApi {
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
  /** validator indices the stand-in reports live, by epoch */
  readonly live = new Map<number, Set<number>>();
  readonly livenessQueries: {epoch: number; indices: number[]}[] = [];
  async getLiveness(epoch: number, indices: number[]) {
    this.livenessQueries.push({epoch, indices});
    return indices.map((index) => ({index, isLive: this.live.get(epoch)?.has(index) ?? false}));
  }
  async prepareBeaconProposer(registrations: {validatorIndex: number; feeRecipient: Uint8Array}[]) {
    this.proposerPreparations.push(...registrations);
  }

  /** the head event streams open now: each a queue of events not read yet, and the wake-up of a read waiting for one */
  private readonly headStreams = new Set<{queue: HeadEvent[]; wake: () => void; ended: boolean}>();
  /** head event streams opened so far */
  headSubscriptions = 0;
  async headEvents(signal: AbortSignal): Promise<AsyncIterable<HeadEvent>> {
    this.headSubscriptions++;
    const stream = {queue: [] as HeadEvent[], wake: () => {}, ended: false};
    this.headStreams.add(stream);
    const streams = this.headStreams;
    signal.addEventListener("abort", () => stream.wake(), {once: true});
    return (async function* () {
      try {
        while (!signal.aborted && !stream.ended) {
          const event = stream.queue.shift();
          if (event) yield event;
          else await new Promise<void>((resolve) => (stream.wake = resolve));
        }
      } finally {
        streams.delete(stream);
      }
    })();
  }
  /** Sends a head event to every open stream. */
  pushHead(event: HeadEvent): void {
    for (const stream of this.headStreams) {
      stream.queue.push(event);
      stream.wake();
    }
  }
  /** Ends every open stream (the node restarted). */
  endHeadStreams(): void {
    for (const stream of this.headStreams) {
      this.headStreams.delete(stream);
      stream.ended = true;
      stream.wake();
    }
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

