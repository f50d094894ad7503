import {
  BLS_WITHDRAWAL_PREFIX,
  FAR_FUTURE_EPOCH,
  ForkSeq,
  MAX_ATTESTER_SLASHINGS,
  MAX_ATTESTER_SLASHINGS_ELECTRA,
  MAX_BLS_TO_EXECUTION_CHANGES,
  MAX_PROPOSER_SLASHINGS,
  MAX_VOLUNTARY_EXITS,
} from "@lodestar/params";
import {
  type CachedBeaconStateAllForks,
  VoluntaryExitValidity,
  assertValidAttesterSlashing,
  assertValidProposerSlashing,
  computeEpochAtSlot,
  getAttesterSlashableIndices,
  getAttesterSlashingSignatureSets,
  getBlsToExecutionChangeSignatureSet,
  getProposerSlashingSignatureSets,
  getValidatorVoluntaryExitSignatureSet,
  getVoluntaryExitValidity,
  isSlashableValidator,
  isValidBlsToExecutionChange,
} from "@lodestar/state-transition";
import {ssz, type AttesterSlashing, type capella, type phase0} from "@lodestar/types";
import {toRootHex} from "@lodestar/utils";
import {getLogger} from "../log.ts";
import {assertValidSignatures} from "./signatures.ts";
import {PoolError, type PoolDeps, type PoolEmitter} from "./types.ts";

const logger = getLogger("pools");

/** The operations a block on a given state may carry, at most the per-block maximum of each. */
export interface BlockOperations {
  proposerSlashings: phase0.ProposerSlashing[];
  attesterSlashings: AttesterSlashing[];
  voluntaryExits: phase0.SignedVoluntaryExit[];
  blsToExecutionChanges: capella.SignedBLSToExecutionChange[];
}

const EXIT_INVALID_REASON: Record<VoluntaryExitValidity, string> = {
  [VoluntaryExitValidity.valid]: "valid",
  [VoluntaryExitValidity.inactive]: "validator is not active",
  [VoluntaryExitValidity.alreadyExited]: "validator has already initiated its exit",
  [VoluntaryExitValidity.earlyEpoch]: "exit epoch is after the current epoch",
  [VoluntaryExitValidity.shortTimeActive]: "validator has not been active for SHARD_COMMITTEE_PERIOD epochs",
  [VoluntaryExitValidity.pendingWithdrawals]: "validator has pending partial withdrawals",
  [VoluntaryExitValidity.invalidSignature]: "invalid signature",
};

/**
 * Slashings, voluntary exits and BLS-to-execution changes: each validated against the head state
 * (signatures included, the pairs of a slashing checked in one batch) before it is kept, one per
 * validator (per set of slashed validators for attester slashings).
 */
export class OpPool {
  private readonly deps: PoolDeps;
  private readonly emitter: PoolEmitter;
  private readonly proposerSlashings = new Map<number, phase0.ProposerSlashing>();
  /** by hash_tree_root, with the validators each one slashes */
  private readonly attesterSlashings = new Map<string, {slashing: AttesterSlashing; indices: number[]}>();
  private readonly voluntaryExits = new Map<number, phase0.SignedVoluntaryExit>();
  private readonly blsToExecutionChanges = new Map<number, capella.SignedBLSToExecutionChange>();

  constructor(deps: PoolDeps, emitter: PoolEmitter) {
    this.deps = deps;
    this.emitter = emitter;
  }

  async submitProposerSlashing(slashing: phase0.ProposerSlashing): Promise<void> {
    const state = await this.headState();
    const proposerIndex = slashing.signedHeader1.message.proposerIndex;
    assertKnownValidator(state, proposerIndex);
    if (this.proposerSlashings.has(proposerIndex)) return;
    try {
      assertValidProposerSlashing(this.deps.config, state.epochCtx.pubkeyCache, state.slot, slashing, state.validators.getReadonly(proposerIndex), false);
    } catch (e) {
      throw new PoolError(`invalid proposer slashing: ${(e as Error).message}`);
    }
    const sets = getProposerSlashingSignatureSets(this.deps.config, state.slot, slashing);
    await assertValidSignatures(this.deps.verifier, sets.map((set, i) => ({what: `signature of header ${i + 1}`, set})), state.epochCtx.pubkeyCache);
    if (this.proposerSlashings.has(proposerIndex)) return;
    this.proposerSlashings.set(proposerIndex, slashing);
    logger.info({proposerIndex}, "proposer slashing added to the pool");
    this.emitter.emit("proposer_slashing", slashing);
  }

  /** Accepts the phase0 and the electra shape (they differ only in the attesting indices limit). */
  async submitAttesterSlashing(slashing: AttesterSlashing): Promise<void> {
    const state = await this.headState();
    const {config} = this.deps;
    try {
      assertValidAttesterSlashing(config, state.epochCtx.pubkeyCache, state.slot, state.validators.length, slashing, false);
    } catch (e) {
      throw new PoolError(`invalid attester slashing: ${(e as Error).message}`);
    }
    const epoch = state.epochCtx.epoch;
    const indices = getAttesterSlashableIndices(slashing).filter((i) => isSlashableValidator(state.validators.getReadonly(i), epoch));
    if (indices.length === 0) throw new PoolError("invalid attester slashing: no validator in both attestations is slashable");
    if (this.coveredBySlashings(indices)) return;
    const sets = getAttesterSlashingSignatureSets(config, state.slot, slashing);
    await assertValidSignatures(this.deps.verifier, sets.map((set, i) => ({what: `signature of attestation ${i + 1}`, set})), state.epochCtx.pubkeyCache);
    if (this.coveredBySlashings(indices)) return;
    this.attesterSlashings.set(toRootHex(ssz.electra.AttesterSlashing.hashTreeRoot(slashing)), {slashing, indices});
    logger.info({indices}, "attester slashing added to the pool");
    this.emitter.emit("attester_slashing", slashing);
  }

  async submitVoluntaryExit(exit: phase0.SignedVoluntaryExit): Promise<void> {
    const state = await this.headState();
    const index = exit.message.validatorIndex;
    assertKnownValidator(state, index);
    if (this.voluntaryExits.has(index)) return;
    const validity = getVoluntaryExitValidity(this.deps.config.getForkSeq(state.slot), state, exit, false);
    if (validity !== VoluntaryExitValidity.valid) {
      throw new PoolError(`invalid voluntary exit for validator ${index}: ${EXIT_INVALID_REASON[validity]}`);
    }
    const set = getValidatorVoluntaryExitSignatureSet(this.deps.config, state.slot, exit);
    await assertValidSignatures(this.deps.verifier, [{what: "signature", set}], state.epochCtx.pubkeyCache);
    if (this.voluntaryExits.has(index)) return;
    this.voluntaryExits.set(index, exit);
    logger.debug({validatorIndex: index, epoch: exit.message.epoch}, "voluntary exit added to the pool");
    this.emitter.emit("voluntary_exit", exit);
  }

  async submitBlsToExecutionChange(change: capella.SignedBLSToExecutionChange): Promise<void> {
    const state = await this.headState();
    const index = change.message.validatorIndex;
    assertKnownValidator(state, index);
    if (this.blsToExecutionChanges.has(index)) return;
    const validity = isValidBlsToExecutionChange(this.deps.config, state.validators.getReadonly(index), change, false);
    if (!validity.valid) throw new PoolError(`invalid BLS to execution change for validator ${index}: ${validity.error.message}`);
    const set = getBlsToExecutionChangeSignatureSet(this.deps.config, change);
    await assertValidSignatures(this.deps.verifier, [{what: "signature", set}], state.epochCtx.pubkeyCache);
    if (this.blsToExecutionChanges.has(index)) return;
    this.blsToExecutionChanges.set(index, change);
    logger.debug({validatorIndex: index}, "BLS to execution change added to the pool");
    this.emitter.emit("bls_to_execution_change", change);
  }

  getProposerSlashings(): phase0.ProposerSlashing[] {
    return [...this.proposerSlashings.values()];
  }

  getAttesterSlashings(): AttesterSlashing[] {
    return [...this.attesterSlashings.values()].map((e) => e.slashing);
  }

  getVoluntaryExits(): phase0.SignedVoluntaryExit[] {
    return [...this.voluntaryExits.values()];
  }

  getBlsToExecutionChanges(): capella.SignedBLSToExecutionChange[] {
    return [...this.blsToExecutionChanges.values()];
  }

  /**
   * The operations still valid on `state` (the block's pre-state advanced to its slot), without
   * conflicts inside the block: a validator is slashed once, and not also exited.
   */
  getForBlock(state: CachedBeaconStateAllForks): BlockOperations {
    const {config} = this.deps;
    const fork = config.getForkSeq(state.slot);
    const epoch = state.epochCtx.epoch;
    const slashed = new Set<number>();
    const proposerSlashings: phase0.ProposerSlashing[] = [];
    for (const [index, slashing] of this.proposerSlashings) {
      if (proposerSlashings.length >= MAX_PROPOSER_SLASHINGS) break;
      if (index >= state.validators.length || slashed.has(index)) continue;
      if (!succeeds(() => assertValidProposerSlashing(config, state.epochCtx.pubkeyCache, state.slot, slashing, state.validators.getReadonly(index), false))) continue;
      proposerSlashings.push(slashing);
      slashed.add(index);
    }
    const attesterSlashings: AttesterSlashing[] = [];
    const maxAttesterSlashings = fork >= ForkSeq.electra ? MAX_ATTESTER_SLASHINGS_ELECTRA : MAX_ATTESTER_SLASHINGS;
    for (const {slashing, indices} of this.attesterSlashings.values()) {
      if (attesterSlashings.length >= maxAttesterSlashings) break;
      const slashable = indices.filter((i) => !slashed.has(i) && isSlashableValidator(state.validators.getReadonly(i), epoch));
      if (slashable.length === 0) continue;
      if (!succeeds(() => assertValidAttesterSlashing(config, state.epochCtx.pubkeyCache, state.slot, state.validators.length, slashing, false))) continue;
      attesterSlashings.push(slashing);
      for (const i of slashable) slashed.add(i);
    }
    const voluntaryExits: phase0.SignedVoluntaryExit[] = [];
    for (const [index, exit] of this.voluntaryExits) {
      if (voluntaryExits.length >= MAX_VOLUNTARY_EXITS) break;
      if (slashed.has(index) || index >= state.validators.length) continue;
      if (getVoluntaryExitValidity(fork, state, exit, false) === VoluntaryExitValidity.valid) voluntaryExits.push(exit);
    }
    const blsToExecutionChanges: capella.SignedBLSToExecutionChange[] = [];
    if (fork >= ForkSeq.capella) {
      for (const [index, change] of this.blsToExecutionChanges) {
        if (blsToExecutionChanges.length >= MAX_BLS_TO_EXECUTION_CHANGES) break;
        if (index >= state.validators.length) continue;
        if (isValidBlsToExecutionChange(config, state.validators.getReadonly(index), change, false).valid) blsToExecutionChanges.push(change);
      }
    }
    return {proposerSlashings, attesterSlashings, voluntaryExits, blsToExecutionChanges};
  }

  /** Drops what the head state shows done: slashed/withdrawable proposers and attesters, exits initiated, credentials changed. */
  pruneIncluded(headState: CachedBeaconStateAllForks): void {
    this.dropCompleted(headState);
  }

  /** The same, on the finalized state: what it shows done can never become valid again. */
  pruneFinalized(finalizedState: CachedBeaconStateAllForks): void {
    this.dropCompleted(finalizedState);
  }

  private dropCompleted(state: CachedBeaconStateAllForks): void {
    const epoch = state.epochCtx.epoch;
    const validator = (i: number) => (i < state.validators.length ? state.validators.getReadonly(i) : null);
    const done = (i: number) => {
      const v = validator(i);
      return v !== null && (v.slashed || epoch >= v.withdrawableEpoch);
    };
    for (const index of this.proposerSlashings.keys()) if (done(index)) this.proposerSlashings.delete(index);
    for (const [root, {indices}] of this.attesterSlashings) if (indices.every(done)) this.attesterSlashings.delete(root);
    for (const index of this.voluntaryExits.keys()) {
      if ((validator(index)?.exitEpoch ?? FAR_FUTURE_EPOCH) !== FAR_FUTURE_EPOCH) this.voluntaryExits.delete(index);
    }
    for (const index of this.blsToExecutionChanges.keys()) {
      const credentials = validator(index)?.withdrawalCredentials;
      if (credentials && credentials[0] !== BLS_WITHDRAWAL_PREFIX) this.blsToExecutionChanges.delete(index);
    }
  }

  private headState(): Promise<CachedBeaconStateAllForks> {
    return this.deps.getStateForEpoch(computeEpochAtSlot(this.deps.currentSlot()));
  }

  /** Every validator these would slash is already slashed by a pooled attester slashing. */
  private coveredBySlashings(indices: number[]): boolean {
    const pooled = new Set([...this.attesterSlashings.values()].flatMap((e) => e.indices));
    return indices.every((i) => pooled.has(i));
  }
}

function assertKnownValidator(state: CachedBeaconStateAllForks, index: number): void {
  if (index >= state.validators.length) throw new PoolError(`unknown validator ${index}`);
}

function succeeds(check: () => void): boolean {
  try {
    check();
    return true;
  } catch {
    return false;
  }
}
