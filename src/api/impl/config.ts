import {DEV_FORKS} from "../../config/forks.ts";
import {chainConfigToJson, specValuesToJson} from "@lodestar/config";
import * as params from "@lodestar/params";
import type {configRoutes} from "../routes/config.ts";
import type {Handlers} from "../routes/types.ts";
import type {ApiContext} from "./context.ts";

/** Handlers of the Config tag. */

/** The spec's constants (values fixed by the consensus specs, neither preset nor config). */
const SPEC_CONSTANTS = {
  GENESIS_SLOT: params.GENESIS_SLOT,
  GENESIS_EPOCH: params.GENESIS_EPOCH,
  FAR_FUTURE_EPOCH: params.FAR_FUTURE_EPOCH,
  BASE_REWARDS_PER_EPOCH: params.BASE_REWARDS_PER_EPOCH,
  DEPOSIT_CONTRACT_TREE_DEPTH: params.DEPOSIT_CONTRACT_TREE_DEPTH,
  JUSTIFICATION_BITS_LENGTH: params.JUSTIFICATION_BITS_LENGTH,
  BLS_WITHDRAWAL_PREFIX: Uint8Array.of(params.BLS_WITHDRAWAL_PREFIX),
  ETH1_ADDRESS_WITHDRAWAL_PREFIX: Uint8Array.of(params.ETH1_ADDRESS_WITHDRAWAL_PREFIX),
  COMPOUNDING_WITHDRAWAL_PREFIX: Uint8Array.of(params.COMPOUNDING_WITHDRAWAL_PREFIX),
  DOMAIN_BEACON_PROPOSER: params.DOMAIN_BEACON_PROPOSER,
  DOMAIN_BEACON_ATTESTER: params.DOMAIN_BEACON_ATTESTER,
  DOMAIN_RANDAO: params.DOMAIN_RANDAO,
  DOMAIN_DEPOSIT: params.DOMAIN_DEPOSIT,
  DOMAIN_VOLUNTARY_EXIT: params.DOMAIN_VOLUNTARY_EXIT,
  DOMAIN_SELECTION_PROOF: params.DOMAIN_SELECTION_PROOF,
  DOMAIN_AGGREGATE_AND_PROOF: params.DOMAIN_AGGREGATE_AND_PROOF,
  DOMAIN_SYNC_COMMITTEE: params.DOMAIN_SYNC_COMMITTEE,
  DOMAIN_SYNC_COMMITTEE_SELECTION_PROOF: params.DOMAIN_SYNC_COMMITTEE_SELECTION_PROOF,
  DOMAIN_CONTRIBUTION_AND_PROOF: params.DOMAIN_CONTRIBUTION_AND_PROOF,
  DOMAIN_BLS_TO_EXECUTION_CHANGE: params.DOMAIN_BLS_TO_EXECUTION_CHANGE,
  DOMAIN_APPLICATION_MASK: params.DOMAIN_APPLICATION_MASK,
  DOMAIN_APPLICATION_BUILDER: params.DOMAIN_APPLICATION_BUILDER,
  TARGET_AGGREGATORS_PER_COMMITTEE: params.TARGET_AGGREGATORS_PER_COMMITTEE,
  ATTESTATION_SUBNET_COUNT: params.ATTESTATION_SUBNET_COUNT,
  ATTESTATION_SUBNET_EXTRA_BITS: params.ATTESTATION_SUBNET_EXTRA_BITS,
  ATTESTATION_SUBNET_PREFIX_BITS: params.ATTESTATION_SUBNET_PREFIX_BITS,
  TIMELY_SOURCE_FLAG_INDEX: params.TIMELY_SOURCE_FLAG_INDEX,
  TIMELY_TARGET_FLAG_INDEX: params.TIMELY_TARGET_FLAG_INDEX,
  TIMELY_HEAD_FLAG_INDEX: params.TIMELY_HEAD_FLAG_INDEX,
  TIMELY_SOURCE_WEIGHT: params.TIMELY_SOURCE_WEIGHT,
  TIMELY_TARGET_WEIGHT: params.TIMELY_TARGET_WEIGHT,
  TIMELY_HEAD_WEIGHT: params.TIMELY_HEAD_WEIGHT,
  SYNC_REWARD_WEIGHT: params.SYNC_REWARD_WEIGHT,
  PROPOSER_WEIGHT: params.PROPOSER_WEIGHT,
  WEIGHT_DENOMINATOR: params.WEIGHT_DENOMINATOR,
  TARGET_AGGREGATORS_PER_SYNC_SUBCOMMITTEE: params.TARGET_AGGREGATORS_PER_SYNC_SUBCOMMITTEE,
  SYNC_COMMITTEE_SUBNET_COUNT: params.SYNC_COMMITTEE_SUBNET_COUNT,
  VERSIONED_HASH_VERSION_KZG: Uint8Array.of(params.VERSIONED_HASH_VERSION_KZG),
  BLOB_TX_TYPE: Uint8Array.of(params.BLOB_TX_TYPE),
  UNSET_DEPOSIT_REQUESTS_START_INDEX: params.UNSET_DEPOSIT_REQUESTS_START_INDEX,
  FULL_EXIT_REQUEST_AMOUNT: params.FULL_EXIT_REQUEST_AMOUNT,
  DEPOSIT_REQUEST_TYPE: Uint8Array.of(params.DEPOSIT_REQUEST_TYPE),
  WITHDRAWAL_REQUEST_TYPE: Uint8Array.of(params.WITHDRAWAL_REQUEST_TYPE),
  CONSOLIDATION_REQUEST_TYPE: Uint8Array.of(params.CONSOLIDATION_REQUEST_TYPE),
};

export const configHandlers: Handlers<typeof configRoutes, ApiContext> = {
  async getSpec(_args, {chain}) {
    return {data: {...specValuesToJson(SPEC_CONSTANTS), ...params.presetToJson(params.activePreset), ...chainConfigToJson(chain.config)}};
  },

  async getForkSchedule(_args, {chain}) {
    return {
      // The forks this node implements (phase0..fulu), scheduled or not; later library forks are not ours to announce.
      data: chain.config.forksAscendingEpochOrder
        .filter((fork) => (DEV_FORKS as readonly string[]).includes(fork.name))
        .map((fork) => ({previousVersion: fork.prevVersion, currentVersion: fork.version, epoch: fork.epoch})),
    };
  },

  async getDepositContract(_args, {chain}) {
    return {data: {chainId: chain.config.DEPOSIT_CHAIN_ID, address: chain.config.DEPOSIT_CONTRACT_ADDRESS}};
  },
};
