import {PublicKey, Signature, fastAggregateVerify} from "@chainsafe/blst";
import {createHash} from "node:crypto";
import {ssz, sszTypesFor, type LightClientHeader, type LightClientUpdate, type altair} from "@lodestar/types";
import type {ForkName, ForkPostAltair} from "@lodestar/params";
import {fromHex} from "@lodestar/utils";

/**
 * A light client written from altair/light-client/sync-protocol.md (with the capella, deneb and
 * electra changes): `initialize_light_client_store`, `validate_light_client_update`,
 * `apply_light_client_update` and `process_light_client_(finality|optimistic_)update`. Merkle
 * branches, domains and signing roots are computed here with sha256; ssz types give only the
 * containers' hash_tree_root. Every failed assertion throws, naming the rule.
 */

const FORKS = ["altair", "bellatrix", "capella", "deneb", "electra", "fulu"] as const;
const DOMAIN_SYNC_COMMITTEE = Uint8Array.of(7, 0, 0, 0);
const EXECUTION_PAYLOAD_GINDEX = 25;
const GINDEX = {
  finalizedRoot: [105, 169],
  currentSyncCommittee: [54, 86],
  nextSyncCommittee: [55, 87],
} as const;

/** `/eth/v1/config/spec` as the node serves it: decimal strings and 0x hex. */
export type SpecConfig = Record<string, string>;

export interface Versioned {
  version: string;
  data: unknown;
}

class SpecAssertion extends Error {}
/** The one rule a valid but old update fails ("update is relevant"): the light client ignores it, as gossip does. */
export class IrrelevantUpdate extends SpecAssertion {}
function assert(condition: boolean, rule: string): asserts condition {
  if (!condition) throw new SpecAssertion(`light client: ${rule}`);
}

const sha256 = (...parts: Uint8Array[]): Uint8Array => new Uint8Array(createHash("sha256").update(Buffer.concat(parts)).digest());
const equalBytes = (a: Uint8Array, b: Uint8Array): boolean => Buffer.from(a).equals(Buffer.from(b));
const floorlog2 = (n: number): number => Math.floor(Math.log2(n));
const ZERO32 = new Uint8Array(32);

/** `is_valid_merkle_branch` of phase0 */
function isValidMerkleBranch(leaf: Uint8Array, branch: Uint8Array[], depth: number, index: number, root: Uint8Array): boolean {
  let value = leaf;
  for (let i = 0; i < depth; i++) {
    value = Math.floor(index / 2 ** i) % 2 === 1 ? sha256(branch[i], value) : sha256(value, branch[i]);
  }
  return equalBytes(value, root);
}

/** `is_valid_normalized_merkle_branch` */
function isValidNormalizedMerkleBranch(leaf: Uint8Array, branch: Uint8Array[], gindex: number, root: Uint8Array): boolean {
  const depth = floorlog2(gindex);
  const index = gindex % 2 ** depth;
  const extra = branch.length - depth;
  for (let i = 0; i < extra; i++) if (!equalBytes(branch[i], ZERO32)) return false;
  return isValidMerkleBranch(leaf, branch.slice(extra), depth, index, root);
}

export interface LightClientStore {
  finalizedHeader: LightClientHeader;
  currentSyncCommittee: altair.SyncCommittee;
  nextSyncCommittee: altair.SyncCommittee;
  bestValidUpdate: LightClientUpdate | null;
  optimisticHeader: LightClientHeader;
  previousMaxActiveParticipants: number;
  currentMaxActiveParticipants: number;
}

export class SpecLightClient {
  store!: LightClientStore;
  private readonly spec: SpecConfig;
  private readonly genesisValidatorsRoot: Uint8Array;
  private readonly slotsPerEpoch: number;
  private readonly epochsPerPeriod: number;

  constructor(spec: SpecConfig, genesisValidatorsRoot: Uint8Array) {
    this.spec = spec;
    this.genesisValidatorsRoot = genesisValidatorsRoot;
    this.slotsPerEpoch = Number(spec.SLOTS_PER_EPOCH);
    this.epochsPerPeriod = Number(spec.EPOCHS_PER_SYNC_COMMITTEE_PERIOD);
  }

  private forkEpoch(fork: string): number {
    const value = this.spec[`${fork.toUpperCase()}_FORK_EPOCH`];
    return value === undefined ? Infinity : Number(value);
  }

  /** The fork of an epoch, by the config's `*_FORK_EPOCH` values. */
  forkAtEpoch(epoch: number): string {
    let current = "phase0";
    for (const fork of FORKS) if (this.forkEpoch(fork) <= epoch) current = fork;
    return current;
  }

  private forkVersionAtEpoch(epoch: number): Uint8Array {
    const fork = this.forkAtEpoch(epoch);
    return fromHex(this.spec[fork === "phase0" ? "GENESIS_FORK_VERSION" : `${fork.toUpperCase()}_FORK_VERSION`]);
  }

  epochAt = (slot: number): number => Math.floor(slot / this.slotsPerEpoch);
  /** `compute_sync_committee_period_at_slot` */
  periodAt = (slot: number): number => Math.floor(this.epochAt(slot) / this.epochsPerPeriod);
  private atLeast = (slot: number, fork: string): boolean => this.epochAt(slot) >= this.forkEpoch(fork);
  private gindexAt = (slot: number, field: keyof typeof GINDEX): number => GINDEX[field][this.atLeast(slot, "electra") ? 1 : 0];

  /** A `{version, data}` answer as the value of its version's type. */
  static parse<T>(typeName: string, {version, data}: Versioned): T {
    const types = sszTypesFor(version as ForkPostAltair) as unknown as Record<string, {fromJson(json: unknown): T}>;
    assert(types[typeName] !== undefined, `no ${typeName} at version ${version}`);
    return types[typeName].fromJson(data);
  }

  private isEmptyHeader(header: LightClientHeader): boolean {
    const type = ssz.fulu.LightClientHeader;
    const full = {...type.defaultValue(), ...header, execution: {...type.defaultValue().execution, ...((header as {execution?: object}).execution ?? {})}};
    return type.equals(full as never, type.defaultValue());
  }

  /** `is_valid_light_client_header` (deneb and electra forms) */
  isValidLightClientHeader(header: LightClientHeader): boolean {
    const slot = header.beacon.slot;
    const withExecution = header as LightClientHeader<ForkName.deneb>;
    if (!this.atLeast(slot, "deneb") && withExecution.execution) {
      if (withExecution.execution.blobGasUsed !== 0n || withExecution.execution.excessBlobGas !== 0n) return false;
    }
    if (!this.atLeast(slot, "capella")) {
      if (!withExecution.execution) return true;
      const empty = ssz.deneb.LightClientHeader.defaultValue();
      return ssz.deneb.ExecutionPayloadHeader.equals(withExecution.execution, empty.execution) && withExecution.executionBranch.every((b) => equalBytes(b, ZERO32));
    }
    // get_lc_execution_root: the execution header in the type of the header's own fork
    const executionType = (sszTypesFor(this.forkAtEpoch(this.epochAt(slot)) as ForkName) as unknown as Record<string, {hashTreeRoot(v: unknown): Uint8Array}>).ExecutionPayloadHeader;
    const executionRoot = executionType.hashTreeRoot(withExecution.execution);
    const depth = floorlog2(EXECUTION_PAYLOAD_GINDEX);
    return isValidMerkleBranch(executionRoot, withExecution.executionBranch, depth, EXECUTION_PAYLOAD_GINDEX % 2 ** depth, header.beacon.bodyRoot);
  }

  /** `initialize_light_client_store(trusted_block_root, bootstrap)` */
  initialize(trustedBlockRoot: Uint8Array, bootstrapJson: Versioned): void {
    const bootstrap = SpecLightClient.parse<{header: LightClientHeader; currentSyncCommittee: altair.SyncCommittee; currentSyncCommitteeBranch: Uint8Array[]}>("LightClientBootstrap", bootstrapJson);
    assert(this.isValidLightClientHeader(bootstrap.header), "bootstrap header is a valid light client header");
    assert(equalBytes(ssz.phase0.BeaconBlockHeader.hashTreeRoot(bootstrap.header.beacon), trustedBlockRoot), "bootstrap header is the trusted block root");
    assert(
      isValidNormalizedMerkleBranch(
        ssz.altair.SyncCommittee.hashTreeRoot(bootstrap.currentSyncCommittee),
        bootstrap.currentSyncCommitteeBranch,
        this.gindexAt(bootstrap.header.beacon.slot, "currentSyncCommittee"),
        bootstrap.header.beacon.stateRoot
      ),
      "current_sync_committee_branch proves the bootstrap's committee"
    );
    this.store = {
      finalizedHeader: bootstrap.header,
      currentSyncCommittee: bootstrap.currentSyncCommittee,
      nextSyncCommittee: ssz.altair.SyncCommittee.defaultValue(),
      bestValidUpdate: null,
      optimisticHeader: bootstrap.header,
      previousMaxActiveParticipants: 0,
      currentMaxActiveParticipants: 0,
    };
  }

  isNextSyncCommitteeKnown(): boolean {
    return !ssz.altair.SyncCommittee.equals(this.store.nextSyncCommittee, ssz.altair.SyncCommittee.defaultValue());
  }

  private isSyncCommitteeUpdate = (u: LightClientUpdate): boolean => u.nextSyncCommitteeBranch.some((b) => !equalBytes(b, ZERO32));
  private isFinalityUpdate = (u: LightClientUpdate): boolean => u.finalityBranch.some((b) => !equalBytes(b, ZERO32));

  /** `validate_light_client_update` */
  validate(update: LightClientUpdate, currentSlot: number): void {
    const {store} = this;
    const bits = update.syncAggregate.syncCommitteeBits;
    assert(bits.getTrueBitIndexes().length >= Number(this.spec.MIN_SYNC_COMMITTEE_PARTICIPANTS ?? 1), "sync committee has sufficient participants");
    assert(this.isValidLightClientHeader(update.attestedHeader), "attested header is valid");
    const attestedSlot = update.attestedHeader.beacon.slot;
    const finalizedSlot = update.finalizedHeader.beacon.slot;
    assert(currentSlot >= update.signatureSlot && update.signatureSlot > attestedSlot && attestedSlot >= finalizedSlot, `current_slot ${currentSlot} >= signature_slot ${update.signatureSlot} > attested ${attestedSlot} >= finalized ${finalizedSlot}`);
    const storePeriod = this.periodAt(store.finalizedHeader.beacon.slot);
    const signaturePeriod = this.periodAt(update.signatureSlot);
    if (this.isNextSyncCommitteeKnown()) assert(signaturePeriod === storePeriod || signaturePeriod === storePeriod + 1, "update does not skip a period");
    else assert(signaturePeriod === storePeriod, "update is signed in the store's period");

    const attestedPeriod = this.periodAt(attestedSlot);
    const hasNextSyncCommittee = !this.isNextSyncCommitteeKnown() && this.isSyncCommitteeUpdate(update) && attestedPeriod === storePeriod;
    if (!(attestedSlot > store.finalizedHeader.beacon.slot || hasNextSyncCommittee)) {
      throw new IrrelevantUpdate(`light client: update is not relevant (attested slot ${attestedSlot}, finalized ${store.finalizedHeader.beacon.slot})`);
    }

    if (!this.isFinalityUpdate(update)) {
      assert(this.isEmptyHeader(update.finalizedHeader), "no finality branch: empty finalized header");
    } else {
      let finalizedRoot: Uint8Array;
      if (finalizedSlot === 0) {
        assert(this.isEmptyHeader(update.finalizedHeader), "genesis finality: empty finalized header");
        finalizedRoot = ZERO32;
      } else {
        assert(this.isValidLightClientHeader(update.finalizedHeader), "finalized header is valid");
        finalizedRoot = ssz.phase0.BeaconBlockHeader.hashTreeRoot(update.finalizedHeader.beacon);
      }
      assert(
        isValidNormalizedMerkleBranch(finalizedRoot, update.finalityBranch, this.gindexAt(attestedSlot, "finalizedRoot"), update.attestedHeader.beacon.stateRoot),
        "finality_branch proves the finalized header"
      );
    }

    if (!this.isSyncCommitteeUpdate(update)) {
      assert(ssz.altair.SyncCommittee.equals(update.nextSyncCommittee, ssz.altair.SyncCommittee.defaultValue()), "no committee branch: empty next committee");
    } else {
      if (attestedPeriod === storePeriod && this.isNextSyncCommitteeKnown()) {
        assert(ssz.altair.SyncCommittee.equals(update.nextSyncCommittee, store.nextSyncCommittee), "next committee is the one the store knows");
      }
      assert(
        isValidNormalizedMerkleBranch(
          ssz.altair.SyncCommittee.hashTreeRoot(update.nextSyncCommittee),
          update.nextSyncCommitteeBranch,
          this.gindexAt(attestedSlot, "nextSyncCommittee"),
          update.attestedHeader.beacon.stateRoot
        ),
        "next_sync_committee_branch proves the next committee"
      );
    }

    const committee = signaturePeriod === storePeriod ? store.currentSyncCommittee : store.nextSyncCommittee;
    const pubkeys = bits.getTrueBitIndexes().map((i) => PublicKey.fromBytes(committee.pubkeys[i]));
    const forkVersion = this.forkVersionAtEpoch(this.epochAt(Math.max(update.signatureSlot, 1) - 1));
    // compute_domain: domain type ‖ fork_data_root[:28]; fork_data_root = hash_tree_root(ForkData(version, gvr))
    const forkDataRoot = sha256(Uint8Array.from([...forkVersion, ...new Uint8Array(28)]), this.genesisValidatorsRoot);
    const domain = Uint8Array.from([...DOMAIN_SYNC_COMMITTEE, ...forkDataRoot.subarray(0, 28)]);
    const signingRoot = sha256(ssz.phase0.BeaconBlockHeader.hashTreeRoot(update.attestedHeader.beacon), domain);
    assert(fastAggregateVerify(signingRoot, pubkeys, Signature.fromBytes(update.syncAggregate.syncCommitteeSignature, true)), "sync aggregate signature verifies");
  }

  /** `apply_light_client_update` */
  private apply(update: LightClientUpdate): void {
    const {store} = this;
    const storePeriod = this.periodAt(store.finalizedHeader.beacon.slot);
    const finalizedPeriod = this.periodAt(update.finalizedHeader.beacon.slot);
    if (!this.isNextSyncCommitteeKnown()) {
      assert(finalizedPeriod === storePeriod, "apply: finalized period is the store's");
      store.nextSyncCommittee = update.nextSyncCommittee;
    } else if (finalizedPeriod === storePeriod + 1) {
      store.currentSyncCommittee = store.nextSyncCommittee;
      store.nextSyncCommittee = update.nextSyncCommittee;
      store.previousMaxActiveParticipants = store.currentMaxActiveParticipants;
      store.currentMaxActiveParticipants = 0;
    }
    if (update.finalizedHeader.beacon.slot > store.finalizedHeader.beacon.slot) {
      store.finalizedHeader = update.finalizedHeader;
      if (store.finalizedHeader.beacon.slot > store.optimisticHeader.beacon.slot) store.optimisticHeader = store.finalizedHeader;
    }
  }

  /** `process_light_client_update` (the best-valid-update bookkeeping keeps the latest valid one; no forced updates here) */
  processUpdate(update: LightClientUpdate, currentSlot: number): void {
    this.validate(update, currentSlot);
    const {store} = this;
    const active = update.syncAggregate.syncCommitteeBits.getTrueBitIndexes().length;
    const size = update.syncAggregate.syncCommitteeBits.bitLen;
    store.bestValidUpdate = update;
    store.currentMaxActiveParticipants = Math.max(store.currentMaxActiveParticipants, active);
    const safetyThreshold = Math.floor(Math.max(store.previousMaxActiveParticipants, store.currentMaxActiveParticipants) / 2);
    if (active > safetyThreshold && update.attestedHeader.beacon.slot > store.optimisticHeader.beacon.slot) store.optimisticHeader = update.attestedHeader;
    const hasFinalizedNextSyncCommittee =
      !this.isNextSyncCommitteeKnown() &&
      this.isSyncCommitteeUpdate(update) &&
      this.isFinalityUpdate(update) &&
      this.periodAt(update.finalizedHeader.beacon.slot) === this.periodAt(update.attestedHeader.beacon.slot);
    if (active * 3 >= size * 2 && (update.finalizedHeader.beacon.slot > store.finalizedHeader.beacon.slot || hasFinalizedNextSyncCommittee)) {
      this.apply(update);
      store.bestValidUpdate = null;
    }
  }

  private asUpdate(partial: Partial<LightClientUpdate> & Pick<LightClientUpdate, "attestedHeader" | "syncAggregate" | "signatureSlot">): LightClientUpdate {
    const empty = sszTypesFor(this.forkAtEpoch(this.epochAt(partial.attestedHeader.beacon.slot)) as ForkPostAltair).LightClientUpdate.defaultValue();
    return {...empty, ...partial} as LightClientUpdate;
  }

  /** `process_light_client_finality_update` */
  processFinalityUpdate(json: Versioned, currentSlot: number): void {
    const u = SpecLightClient.parse<LightClientUpdate>("LightClientFinalityUpdate", json);
    this.processUpdate(this.asUpdate({attestedHeader: u.attestedHeader, finalizedHeader: u.finalizedHeader, finalityBranch: u.finalityBranch, syncAggregate: u.syncAggregate, signatureSlot: u.signatureSlot}), currentSlot);
  }

  /** `process_light_client_optimistic_update` */
  processOptimisticUpdate(json: Versioned, currentSlot: number): void {
    const u = SpecLightClient.parse<LightClientUpdate>("LightClientOptimisticUpdate", json);
    this.processUpdate(this.asUpdate({attestedHeader: u.attestedHeader, syncAggregate: u.syncAggregate, signatureSlot: u.signatureSlot}), currentSlot);
  }

  processUpdateJson(json: Versioned, currentSlot: number): void {
    this.processUpdate(SpecLightClient.parse<LightClientUpdate>("LightClientUpdate", json), currentSlot);
  }
}
