import type {GossipType} from "../topics.ts";
import {createAggregateValidator, createAttestationValidator} from "./attestations.ts";
import {createBlockValidator} from "./block.ts";
import {
  createAttesterSlashingValidator,
  createBlsToExecutionChangeValidator,
  createProposerSlashingValidator,
  createVoluntaryExitValidator,
} from "./operations.ts";
import {PoolAdmissions} from "./outcomes.ts";
import {createBlobSidecarValidator, createDataColumnSidecarValidator} from "./sidecars.ts";
import {createContributionValidator, createSyncCommitteeMessageValidator} from "./syncCommittee.ts";
import {createLightClientFinalityUpdateValidator, createLightClientOptimisticUpdateValidator} from "./lightClient.ts";
import {type GossipValidatorDeps, type GossipValidatorFn} from "./types.ts";

export type {GossipChain, GossipClock, GossipValidationResult, GossipValidatorDeps, GossipValidatorFn} from "./types.ts";

/**
 * One validator per gossip topic type (p2p-interface.md, phase0 to fulu). Each returns ACCEPT,
 * IGNORE or REJECT with a reason; what it accepts is already where it belongs (block imported,
 * operation in its pool). Messages must be the topic's SSZ type for the topic's fork.
 */
export function createGossipValidators(deps: GossipValidatorDeps): Record<GossipType, GossipValidatorFn> {
  const admissions = new PoolAdmissions(deps.pools.emitter);
  return {
    beacon_block: createBlockValidator(deps),
    beacon_aggregate_and_proof: createAggregateValidator(deps, admissions),
    beacon_attestation: createAttestationValidator(deps, admissions),
    voluntary_exit: createVoluntaryExitValidator(deps, admissions),
    proposer_slashing: createProposerSlashingValidator(deps, admissions),
    attester_slashing: createAttesterSlashingValidator(deps, admissions),
    sync_committee_contribution_and_proof: createContributionValidator(deps, admissions),
    sync_committee: createSyncCommitteeMessageValidator(deps),
    bls_to_execution_change: createBlsToExecutionChangeValidator(deps, admissions),
    blob_sidecar: createBlobSidecarValidator(deps),
    data_column_sidecar: createDataColumnSidecarValidator(deps),
    light_client_finality_update: createLightClientFinalityUpdateValidator(deps),
    light_client_optimistic_update: createLightClientOptimisticUpdateValidator(deps),
  };
}
