import {computeEpochAtSlot} from "@lodestar/state-transition";
import type {AttesterSlashing, capella, phase0} from "@lodestar/types";
import {type PoolAdmissions, poolErrorOutcome} from "./outcomes.ts";
import {type GossipValidationResult, type GossipValidatorDeps, type GossipValidatorFn, accept, ignore} from "./types.ts";

/**
 * voluntary_exit, proposer_slashing, attester_slashing (phase0) and bls_to_execution_change
 * (capella). The operation pool validates each against the head state, signatures included
 * (the conditions of process_*: REJECT), and drops the ones it has for the same validator (the
 * first-seen rules: IGNORE).
 */

async function submitOperation(admissions: PoolAdmissions, value: object, submission: Promise<void>, seen: string): Promise<GossipValidationResult> {
  try {
    return (await admissions.submit(value, submission)) ? accept("added to the operation pool") : ignore(seen);
  } catch (e) {
    return poolErrorOutcome(e);
  }
}

export function createVoluntaryExitValidator(deps: GossipValidatorDeps, admissions: PoolAdmissions): GossipValidatorFn {
  return (_topic, message) => {
    const exit = message as phase0.SignedVoluntaryExit;
    const index = exit.message.validatorIndex;
    return submitOperation(admissions, exit, deps.pools.opPool.submitVoluntaryExit(exit), `a voluntary exit of validator ${index} was seen already`);
  };
}

export function createProposerSlashingValidator(deps: GossipValidatorDeps, admissions: PoolAdmissions): GossipValidatorFn {
  return (_topic, message) => {
    const slashing = message as phase0.ProposerSlashing;
    const index = slashing.signedHeader1.message.proposerIndex;
    return submitOperation(admissions, slashing, deps.pools.opPool.submitProposerSlashing(slashing), `a proposer slashing of validator ${index} was seen already`);
  };
}

export function createAttesterSlashingValidator(deps: GossipValidatorDeps, admissions: PoolAdmissions): GossipValidatorFn {
  return (_topic, message) => {
    const slashing = message as AttesterSlashing;
    return submitOperation(
      admissions,
      slashing,
      deps.pools.opPool.submitAttesterSlashing(slashing),
      "every validator this attester slashing would slash is in a slashing seen already"
    );
  };
}

export function createBlsToExecutionChangeValidator(deps: GossipValidatorDeps, admissions: PoolAdmissions): GossipValidatorFn {
  return async (_topic, message) => {
    const currentEpoch = computeEpochAtSlot(deps.clock.currentSlot());
    if (currentEpoch < deps.config.CAPELLA_FORK_EPOCH) return ignore(`current epoch ${currentEpoch} is before capella`);
    const change = message as capella.SignedBLSToExecutionChange;
    const index = change.message.validatorIndex;
    return submitOperation(
      admissions,
      change,
      deps.pools.opPool.submitBlsToExecutionChange(change),
      `a BLS to execution change of validator ${index} was seen already`
    );
  };
}
