import {ContainerType, type ValueOf} from "@chainsafe/ssz";
import {ArrayOf, ssz} from "@lodestar/types";
import {type BlockId, type ChainMeta, type ValidatorId, blockId, chainMeta, sszData, uint} from "../codecs.ts";
import {validatorIdsBody} from "./states.ts";
import {route} from "./types.ts";

/** Routes of the Beacon tag's rewards (spec tag Rewards): of a block, of a block's sync aggregate, of an epoch's attestations. */

/** Gwei amounts that may be negative (penalties): decimal strings with a sign. */
const Int64 = ssz.UintNum64;

export const BlockRewardsType = new ContainerType(
  {
    proposerIndex: ssz.ValidatorIndex,
    total: ssz.UintNum64,
    attestations: ssz.UintNum64,
    syncAggregate: ssz.UintNum64,
    proposerSlashings: ssz.UintNum64,
    attesterSlashings: ssz.UintNum64,
  },
  {jsonCase: "eth2"}
);
export type BlockRewards = ValueOf<typeof BlockRewardsType>;

/** Attestation rewards from altair on (no `inclusion_delay`, a phase0 component). */
const attestationRewardFields = {head: Int64, target: Int64, source: Int64, inactivity: Int64};
export const AttestationsRewardsType = new ContainerType(
  {
    idealRewards: ArrayOf(new ContainerType({effectiveBalance: ssz.UintNum64, ...attestationRewardFields}, {jsonCase: "eth2"})),
    totalRewards: ArrayOf(new ContainerType({validatorIndex: ssz.ValidatorIndex, ...attestationRewardFields}, {jsonCase: "eth2"})),
  },
  {jsonCase: "eth2"}
);
export type AttestationsRewards = ValueOf<typeof AttestationsRewardsType>;

export const SyncCommitteeRewardsType = ArrayOf(new ContainerType({validatorIndex: ssz.ValidatorIndex, reward: Int64}, {jsonCase: "eth2"}));
export type SyncCommitteeRewards = ValueOf<typeof SyncCommitteeRewardsType>;

const blockIdArg = {in: "path", name: "block_id", codec: blockId} as const;

export const rewardRoutes = {
  getBlockRewards: route<{blockId: BlockId}, BlockRewards, ChainMeta>({
    method: "GET",
    path: "/eth/v1/beacon/rewards/blocks/{block_id}",
    version: 1,
    tag: "Beacon",
    args: {blockId: blockIdArg},
    response: {kind: "data", data: sszData(() => BlockRewardsType, {ssz: false}), meta: chainMeta},
  }),
  getAttestationsRewards: route<{epoch: number; ids: ValidatorId[]}, AttestationsRewards, ChainMeta>({
    method: "POST",
    path: "/eth/v1/beacon/rewards/attestations/{epoch}",
    version: 1,
    tag: "Beacon",
    args: {epoch: {in: "path", name: "epoch", codec: uint}, ids: validatorIdsBody()},
    response: {kind: "data", data: sszData(() => AttestationsRewardsType, {ssz: false}), meta: chainMeta},
  }),
  getSyncCommitteeRewards: route<{blockId: BlockId; ids: ValidatorId[]}, SyncCommitteeRewards, ChainMeta>({
    method: "POST",
    path: "/eth/v1/beacon/rewards/sync_committee/{block_id}",
    version: 1,
    tag: "Beacon",
    args: {blockId: blockIdArg, ids: validatorIdsBody()},
    response: {kind: "data", data: sszData(() => SyncCommitteeRewardsType, {ssz: false}), meta: chainMeta},
  }),
};
