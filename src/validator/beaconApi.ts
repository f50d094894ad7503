import type {ForkName} from "@lodestar/params";
import type {BeaconBlock, Root, SignedBeaconBlock, SignedBlindedBeaconBlock, Slot, altair, bellatrix, phase0, Attestation, SignedAggregateAndProof, electra} from "@lodestar/types";
import type {AttesterDuty, ProposerDuty, SyncDuty} from "../duties/index.ts";

/** The duty shapes are the node's own domain types (src/duties computes them). */
export type {AttesterDuty, ProposerDuty, SyncDuty};

/**
 * The Beacon API as the validator client sees it: domain values in, domain values out.
 * Implemented over the route table's client (src/api/client.ts), over HTTP or in-process;
 * each method is one standard endpoint (its operationId in the comment). Errors throw
 * ApiClientError carrying the HTTP status and the `{code, message}` body.
 */
/** The blobs a produced block commits to, with their KZG proofs (cell proofs from fulu on): published with the block. */
export interface BlockBlobs {
  blobs: Uint8Array[];
  kzgProofs: Uint8Array[];
}

/** What a `head` event (the event stream's `head` topic) tells of the duties. */
export interface HeadEvent {
  slot: Slot;
  block: Root;
  /** the block the head epoch's attester duties depend on (the last slot of the epoch before the previous) */
  previousDutyDependentRoot: Root;
  /** the block the next epoch's attester duties, and the head epoch's proposer duties, depend on */
  currentDutyDependentRoot: Root;
}

export interface ValidatorStatus {
  index: number;
  pubkey: Uint8Array;
  status: string;
}

export interface ValidatorBeaconApi {
  /** getGenesis */
  getGenesis(): Promise<{genesisTime: number; genesisValidatorsRoot: Root; genesisForkVersion: Uint8Array}>;
  /** getSpec: the config as the spec's string map (chainConfigFromJson turns it into a ChainConfig) */
  getSpec(): Promise<Record<string, string>>;
  /** getForkSchedule */
  getForkSchedule(): Promise<phase0.Fork[]>;
  /** postStateValidators on `head`, filtered by public keys */
  getValidators(pubkeys: Uint8Array[]): Promise<ValidatorStatus[]>;
  /** getProposerDuties */
  getProposerDuties(epoch: number): Promise<{dependentRoot: Root; duties: ProposerDuty[]}>;
  /** getAttesterDuties */
  getAttesterDuties(epoch: number, indices: number[]): Promise<{dependentRoot: Root; duties: AttesterDuty[]}>;
  /** getSyncCommitteeDuties */
  getSyncCommitteeDuties(epoch: number, indices: number[]): Promise<SyncDuty[]>;
  /** produceBlockV3; with `builderBoostFactor` (builder mode) the block may be blinded (a BlindedBeaconBlock) */
  produceBlock(slot: Slot, randaoReveal: Uint8Array, graffiti?: Uint8Array, builderBoostFactor?: bigint): Promise<{block: BeaconBlock; fork: ForkName; blobs: BlockBlobs; blinded?: boolean}>;
  /** publishBlockV2 with broadcast_validation=gossip */
  publishBlock(signedBlock: SignedBeaconBlock, fork: ForkName, blobs: BlockBlobs): Promise<void>;
  /** publishBlindedBlockV2 with broadcast_validation=gossip (builder mode) */
  publishBlindedBlock?(signed: SignedBlindedBeaconBlock, fork: ForkName): Promise<void>;
  /** registerValidator (builder mode) */
  registerValidator?(registrations: bellatrix.SignedValidatorRegistrationV1[]): Promise<void>;
  /** produceAttestationData */
  produceAttestationData(committeeIndex: number, slot: Slot): Promise<phase0.AttestationData>;
  /** submitPoolAttestationsV2: phase0 Attestations before electra, SingleAttestations from electra on */
  submitAttestations(attestations: (phase0.Attestation | electra.SingleAttestation)[], fork: ForkName): Promise<void>;
  /** getAggregatedAttestationV2 */
  getAggregatedAttestation(attestationDataRoot: Root, slot: Slot, committeeIndex: number): Promise<{attestation: Attestation; fork: ForkName}>;
  /** publishAggregateAndProofsV2 */
  publishAggregateAndProofs(signed: SignedAggregateAndProof[], fork: ForkName): Promise<void>;
  /** prepareBeaconCommitteeSubnet */
  prepareBeaconCommitteeSubnet(subscriptions: {validatorIndex: number; committeeIndex: number; committeesAtSlot: number; slot: Slot; isAggregator: boolean}[]): Promise<void>;
  /** getBlockRoot (`head` for sync committee messages) */
  getBlockRoot(blockId: string): Promise<Root>;
  /** submitPoolSyncCommitteeSignatures */
  submitSyncCommitteeMessages(messages: altair.SyncCommitteeMessage[]): Promise<void>;
  /** produceSyncCommitteeContribution */
  produceSyncCommitteeContribution(slot: Slot, subcommitteeIndex: number, beaconBlockRoot: Root): Promise<altair.SyncCommitteeContribution>;
  /** publishContributionAndProofs */
  publishContributionAndProofs(signed: altair.SignedContributionAndProof[]): Promise<void>;
  /** getLiveness: whether the node saw each validator live (attesting, proposing) in `epoch` (its previous, current or next epoch) */
  getLiveness(epoch: number, indices: number[]): Promise<{index: number; isLive: boolean}[]>;
  /** prepareBeaconProposer */
  prepareBeaconProposer(registrations: {validatorIndex: number; feeRecipient: Uint8Array}[]): Promise<void>;
  /** eventstream on the `head` topic: resolves once subscribed; the events end when the stream closes or `signal` aborts */
  headEvents(signal: AbortSignal): Promise<AsyncIterable<HeadEvent>>;
}
