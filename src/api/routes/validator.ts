import {BooleanType, ContainerType, ListBasicType, type ValueOf} from "@chainsafe/ssz";
import {
  type ForkName,
  isForkPostBellatrix,
  MAX_COMMITTEES_PER_SLOT,
  SYNC_COMMITTEE_SIZE,
  TARGET_AGGREGATORS_PER_COMMITTEE,
  VALIDATOR_REGISTRY_LIMIT,
} from "@lodestar/params";
import {ssz, type Attestation, type BeaconBlock, type SignedAggregateAndProof, type altair, type bellatrix, type phase0} from "@lodestar/types";
import {
  type BlockContents,
  type SszLike,
  type ValidatorId,
  type VersionMeta,
  blockContentsType,
  blockValueMeta,
  consensusBlockValueMeta,
  dependentRootMeta,
  executionOptimisticMeta,
  executionPayloadBlindedMeta,
  executionPayloadValueMeta,
  flag,
  fork,
  forkType,
  formatValidatorId,
  graffiti,
  listBody,
  listData,
  optional,
  parseUint,
  parseValidatorId,
  root,
  signature,
  sszData,
  stringListBody,
  uint,
  uint64,
  v2ConsensusBlockValueMeta,
  versionMeta,
  versionOnlyMeta,
} from "../codecs.ts";
import {route, type ParamDef} from "./types.ts";

/** Routes of the Validator tag: duties, block and attestation production, aggregation, subscriptions. */

export const ProposerDutyType = new ContainerType({pubkey: ssz.BLSPubkey, validatorIndex: ssz.ValidatorIndex, slot: ssz.Slot}, {jsonCase: "eth2"});
export const AttesterDutyType = new ContainerType(
  {
    pubkey: ssz.BLSPubkey,
    validatorIndex: ssz.ValidatorIndex,
    committeeIndex: ssz.CommitteeIndex,
    committeeLength: ssz.UintNum64,
    committeesAtSlot: ssz.UintNum64,
    validatorCommitteeIndex: ssz.UintNum64,
    slot: ssz.Slot,
  },
  {jsonCase: "eth2"}
);
export const SyncDutyType = new ContainerType(
  {pubkey: ssz.BLSPubkey, validatorIndex: ssz.ValidatorIndex, validatorSyncCommitteeIndices: new ListBasicType(ssz.CommitteeIndex, SYNC_COMMITTEE_SIZE)},
  {jsonCase: "eth2"}
);
export type ProposerDuty = ValueOf<typeof ProposerDutyType>;
export type AttesterDuty = ValueOf<typeof AttesterDutyType>;
export type SyncDuty = ValueOf<typeof SyncDutyType>;

export const BeaconCommitteeSubscriptionType = new ContainerType(
  {validatorIndex: ssz.ValidatorIndex, committeeIndex: ssz.CommitteeIndex, committeesAtSlot: ssz.UintNum64, slot: ssz.Slot, isAggregator: new BooleanType()},
  {jsonCase: "eth2"}
);
export const SyncCommitteeSubscriptionType = new ContainerType(
  {validatorIndex: ssz.ValidatorIndex, syncCommitteeIndices: new ListBasicType(ssz.CommitteeIndex, SYNC_COMMITTEE_SIZE), untilEpoch: ssz.Epoch},
  {jsonCase: "eth2"}
);
export const ProposerPreparationType = new ContainerType({validatorIndex: ssz.ValidatorIndex, feeRecipient: ssz.ExecutionAddress}, {jsonCase: "eth2"});
export const LivenessType = new ContainerType({index: ssz.ValidatorIndex, isLive: ssz.Boolean}, {jsonCase: "eth2"});
export const BeaconCommitteeSelectionType = new ContainerType(
  {validatorIndex: ssz.ValidatorIndex, slot: ssz.Slot, selectionProof: ssz.BLSSignature},
  {jsonCase: "eth2"}
);
export const SyncCommitteeSelectionType = new ContainerType(
  {validatorIndex: ssz.ValidatorIndex, slot: ssz.Slot, subcommitteeIndex: ssz.CommitteeIndex, selectionProof: ssz.BLSSignature},
  {jsonCase: "eth2"}
);
export type Liveness = ValueOf<typeof LivenessType>;
export type BeaconCommitteeSelection = ValueOf<typeof BeaconCommitteeSelectionType>;
export type SyncCommitteeSelection = ValueOf<typeof SyncCommitteeSelectionType>;
export type BeaconCommitteeSubscription = ValueOf<typeof BeaconCommitteeSubscriptionType>;
export type SyncCommitteeSubscription = ValueOf<typeof SyncCommitteeSubscriptionType>;
export type ProposerPreparation = ValueOf<typeof ProposerPreparationType>;

export interface DutiesMeta {
  dependentRoot: Uint8Array;
  executionOptimistic: boolean;
}
const dutiesMeta = {dependentRoot: dependentRootMeta, executionOptimistic: executionOptimisticMeta};

export interface ProduceBlockV2Meta extends VersionMeta {
  /** wei: the execution payload value */
  blockValue: bigint;
  /** wei */
  consensusBlockValue: bigint;
}

export interface ProduceBlockV3Meta extends VersionMeta {
  executionPayloadBlinded: boolean;
  /** wei */
  executionPayloadValue: bigint;
  /** wei */
  consensusBlockValue: bigint;
}

export interface ProduceBlockArgs {
  slot: number;
  randaoReveal: Uint8Array;
  /** 32 bytes; the node's graffiti when absent */
  graffiti?: Uint8Array;
  skipRandaoVerification?: boolean;
}

const epochArg = {in: "path", name: "epoch", codec: uint} as const;
const slotQuery = {in: "query", name: "slot", codec: uint} as const;
const forkHeader = {in: "header", name: "Eth-Consensus-Version", codec: fork} as const;
const produceBlockArgs: {[K in keyof ProduceBlockArgs]-?: ParamDef<ProduceBlockArgs[K]>} = {
  slot: {in: "path", name: "slot", codec: uint},
  randaoReveal: {in: "query", name: "randao_reveal", codec: signature},
  graffiti: {in: "query", name: "graffiti", codec: optional(graffiti)},
  skipRandaoVerification: {in: "query", name: "skip_randao_verification", codec: flag},
};
/** A blinded block (a bare block before bellatrix) carried as block contents without blobs. */
function blindedBlockAsContents(version: ForkName): SszLike<BlockContents> {
  const type = forkType<BeaconBlock>(version, isForkPostBellatrix(version) ? "BlindedBeaconBlock" : "BeaconBlock");
  return {
    toJson: (c) => type.toJson(c.block),
    fromJson: (json) => ({block: type.fromJson(json), kzgProofs: [], blobs: []}),
    serialize: (c) => type.serialize(c.block),
    deserialize: (bytes) => ({block: type.deserialize(bytes), kzgProofs: [], blobs: []}),
  };
}
const AGGREGATES_LIMIT = MAX_COMMITTEES_PER_SLOT * TARGET_AGGREGATORS_PER_COMMITTEE;

export const validatorRoutes = {
  getProposerDuties: route<{epoch: number}, ProposerDuty[], DutiesMeta>({
    method: "GET",
    path: "/eth/v1/validator/duties/proposer/{epoch}",
    version: 1,
    tag: "Validator",
    args: {epoch: epochArg},
    response: {kind: "data", data: listData(ProposerDutyType), meta: dutiesMeta},
  }),
  /** The body lists validator indices; 0x public keys are accepted too (the product spec's clients send them). */
  getAttesterDuties: route<{epoch: number; validators: ValidatorId[]}, AttesterDuty[], DutiesMeta>({
    method: "POST",
    path: "/eth/v1/validator/duties/attester/{epoch}",
    version: 1,
    tag: "Validator",
    args: {epoch: epochArg, validators: stringListBody("validator indices or public keys", parseValidatorId, formatValidatorId, {minItems: 1})},
    response: {kind: "data", data: listData(AttesterDutyType), meta: dutiesMeta},
  }),
  getSyncCommitteeDuties: route<{epoch: number; indices: number[]}, SyncDuty[], {executionOptimistic: boolean}>({
    method: "POST",
    path: "/eth/v1/validator/duties/sync/{epoch}",
    version: 1,
    tag: "Validator",
    args: {epoch: epochArg, indices: stringListBody("validator indices", parseUint, String, {minItems: 1})},
    response: {kind: "data", data: listData(SyncDutyType), meta: {executionOptimistic: executionOptimisticMeta}},
  }),
  produceBlockV3: route<ProduceBlockArgs & {builderBoostFactor?: bigint}, BlockContents, ProduceBlockV3Meta>({
    method: "GET",
    path: "/eth/v3/validator/blocks/{slot}",
    version: 3,
    tag: "Validator",
    args: {...produceBlockArgs, builderBoostFactor: {in: "query", name: "builder_boost_factor", codec: optional(uint64)}},
    response: {
      kind: "data",
      data: sszData((meta) => (meta.executionPayloadBlinded ? blindedBlockAsContents(meta.version) : blockContentsType(meta.version)), {ssz: true}),
      meta: {
        version: versionMeta,
        executionPayloadBlinded: executionPayloadBlindedMeta,
        executionPayloadValue: executionPayloadValueMeta,
        consensusBlockValue: consensusBlockValueMeta,
      },
    },
  }),
  /** Removed from the standard API in v3; the product spec's block production endpoint. */
  produceBlockV2: route<ProduceBlockArgs, BlockContents, ProduceBlockV2Meta>({
    method: "GET",
    path: "/eth/v2/validator/blocks/{slot}",
    version: 2,
    tag: "Validator",
    args: produceBlockArgs,
    response: {
      kind: "data",
      data: sszData((meta) => blockContentsType(meta.version), {ssz: true}),
      meta: {version: versionMeta, blockValue: blockValueMeta, consensusBlockValue: v2ConsensusBlockValueMeta},
    },
  }),
  /**
   * Removed from the standard API with v3 (v2.x: `produceBlindedBlock`); validator clients in builder
   * mode of early 2023 (Lodestar 1.5) call it. The builder's block when it has a usable bid, else the
   * local block blinded (before bellatrix, the block itself).
   */
  produceBlindedBlock: route<ProduceBlockArgs, BlockContents, VersionMeta>({
    method: "GET",
    path: "/eth/v1/validator/blinded_blocks/{slot}",
    version: 1,
    tag: "Validator",
    args: produceBlockArgs,
    response: {kind: "data", data: sszData((meta) => blindedBlockAsContents(meta.version), {ssz: true}), meta: versionOnlyMeta},
  }),
  produceAttestationData: route<{slot: number; committeeIndex: number}, phase0.AttestationData>({
    method: "GET",
    path: "/eth/v1/validator/attestation_data",
    version: 1,
    tag: "Validator",
    args: {slot: slotQuery, committeeIndex: {in: "query", name: "committee_index", codec: uint}},
    response: {kind: "data", data: sszData(() => ssz.phase0.AttestationData, {ssz: true}), meta: {}},
  }),
  getAggregatedAttestationV2: route<{attestationDataRoot: Uint8Array; slot: number; committeeIndex: number}, Attestation, VersionMeta>({
    method: "GET",
    path: "/eth/v2/validator/aggregate_attestation",
    version: 2,
    tag: "Validator",
    args: {
      attestationDataRoot: {in: "query", name: "attestation_data_root", codec: root},
      slot: slotQuery,
      committeeIndex: {in: "query", name: "committee_index", codec: uint},
    },
    response: {kind: "data", data: sszData((meta) => forkType(meta.version, "Attestation"), {ssz: true}), meta: versionOnlyMeta},
  }),
  /** Removed from the standard API in v4 (pre-electra only); the product spec's aggregate endpoint. */
  getAggregatedAttestation: route<{attestationDataRoot: Uint8Array; slot: number}, phase0.Attestation>({
    method: "GET",
    path: "/eth/v1/validator/aggregate_attestation",
    version: 1,
    tag: "Validator",
    args: {attestationDataRoot: {in: "query", name: "attestation_data_root", codec: root}, slot: slotQuery},
    response: {kind: "data", data: sszData(() => ssz.phase0.Attestation, {ssz: false}), meta: {}},
  }),
  publishAggregateAndProofsV2: route<{signedAggregateAndProofs: SignedAggregateAndProof[]; fork: ForkName}>({
    method: "POST",
    path: "/eth/v2/validator/aggregate_and_proofs",
    version: 2,
    tag: "Validator",
    args: {signedAggregateAndProofs: listBody(({fork}) => forkType(fork, "SignedAggregateAndProof"), AGGREGATES_LIMIT), fork: forkHeader},
    response: {kind: "empty"},
  }),
  /** Removed from the standard API in v4 (pre-electra only); kept for the product spec's clients. */
  publishAggregateAndProofs: route<{signedAggregateAndProofs: phase0.SignedAggregateAndProof[]}>({
    method: "POST",
    path: "/eth/v1/validator/aggregate_and_proofs",
    version: 1,
    tag: "Validator",
    args: {signedAggregateAndProofs: listBody(() => ssz.phase0.SignedAggregateAndProof)},
    response: {kind: "empty"},
  }),
  prepareBeaconCommitteeSubnet: route<{subscriptions: BeaconCommitteeSubscription[]}>({
    method: "POST",
    path: "/eth/v1/validator/beacon_committee_subscriptions",
    version: 1,
    tag: "Validator",
    args: {subscriptions: listBody(() => BeaconCommitteeSubscriptionType)},
    response: {kind: "empty"},
  }),
  prepareSyncCommitteeSubnets: route<{subscriptions: SyncCommitteeSubscription[]}>({
    method: "POST",
    path: "/eth/v1/validator/sync_committee_subscriptions",
    version: 1,
    tag: "Validator",
    args: {subscriptions: listBody(() => SyncCommitteeSubscriptionType)},
    response: {kind: "empty"},
  }),
  produceSyncCommitteeContribution: route<{slot: number; subcommitteeIndex: number; beaconBlockRoot: Uint8Array}, altair.SyncCommitteeContribution>({
    method: "GET",
    path: "/eth/v1/validator/sync_committee_contribution",
    version: 1,
    tag: "Validator",
    args: {
      slot: slotQuery,
      subcommitteeIndex: {in: "query", name: "subcommittee_index", codec: uint},
      beaconBlockRoot: {in: "query", name: "beacon_block_root", codec: root},
    },
    response: {kind: "data", data: sszData(() => ssz.altair.SyncCommitteeContribution, {ssz: false}), meta: {}},
  }),
  publishContributionAndProofs: route<{contributionAndProofs: altair.SignedContributionAndProof[]}>({
    method: "POST",
    path: "/eth/v1/validator/contribution_and_proofs",
    version: 1,
    tag: "Validator",
    args: {contributionAndProofs: listBody(() => ssz.altair.SignedContributionAndProof)},
    response: {kind: "empty"},
  }),
  prepareBeaconProposer: route<{preparations: ProposerPreparation[]}>({
    method: "POST",
    path: "/eth/v1/validator/prepare_beacon_proposer",
    version: 1,
    tag: "Validator",
    args: {preparations: listBody(() => ProposerPreparationType)},
    response: {kind: "empty"},
  }),
  getLiveness: route<{epoch: number; indices: number[]}, Liveness[]>({
    method: "POST",
    path: "/eth/v1/validator/liveness/{epoch}",
    version: 1,
    tag: "Validator",
    args: {epoch: epochArg, indices: stringListBody("validator indices", parseUint, String, {minItems: 1})},
    response: {kind: "data", data: listData(LivenessType), meta: {}},
  }),
  registerValidator: route<{registrations: bellatrix.SignedValidatorRegistrationV1[]}>({
    method: "POST",
    path: "/eth/v1/validator/register_validator",
    version: 1,
    tag: "Validator",
    args: {registrations: listBody(() => ssz.bellatrix.SignedValidatorRegistrationV1, VALIDATOR_REGISTRY_LIMIT)},
    response: {kind: "empty"},
  }),
  /** For distributed validator middleware; a beacon node answers 501, as the spec allows. */
  submitBeaconCommitteeSelections: route<{selections: BeaconCommitteeSelection[]}, BeaconCommitteeSelection[]>({
    method: "POST",
    path: "/eth/v1/validator/beacon_committee_selections",
    version: 1,
    tag: "Validator",
    args: {selections: listBody(() => BeaconCommitteeSelectionType)},
    response: {kind: "data", data: listData(BeaconCommitteeSelectionType), meta: {}},
  }),
  submitSyncCommitteeSelections: route<{selections: SyncCommitteeSelection[]}, SyncCommitteeSelection[]>({
    method: "POST",
    path: "/eth/v1/validator/sync_committee_selections",
    version: 1,
    tag: "Validator",
    args: {selections: listBody(() => SyncCommitteeSelectionType)},
    response: {kind: "data", data: listData(SyncCommitteeSelectionType), meta: {}},
  }),
};
