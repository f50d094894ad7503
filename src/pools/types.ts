import type {SignatureVerifier} from "../bls/verifier.ts";
import type {BeaconConfig} from "@lodestar/config";
import type {CachedBeaconStateAllForks, EpochShuffling, PubkeyCache} from "@lodestar/state-transition";
import type {AttesterSlashing, altair, capella, electra, phase0, Attestation} from "@lodestar/types";
import type {EventEmitter} from "node:events";

export interface PoolDeps {
  config: BeaconConfig;
  currentSlot: () => number;
  /** the head state advanced to `epoch` if needed (committees and the pubkey cache come from its epochCtx) */
  getStateForEpoch: (epoch: number) => Promise<CachedBeaconStateAllForks>;
  /**
   * The committees of an attestation: the attester shuffling of `target.epoch` in the state of its
   * target checkpoint (`target.root`, a 0x hex root known to fork choice, advanced to the epoch start).
   */
  getTargetShuffling: (target: {epoch: number; root: string}) => Promise<EpochShuffling>;
  /** the validators' public keys (one cache shared by every state) */
  pubkeyCache: () => PubkeyCache;
  /** is this block (0x hex root) known to fork choice */
  hasBlock: (rootHex: string) => boolean;
  /** called for every validated attestation's attesters, so fork choice counts the votes */
  onAttestationVotes: (validatorIndices: number[], blockRootHex: string, targetEpoch: number, slot: number) => void;
  /** checks the signatures of every submission */
  verifier: SignatureVerifier;
}

/** Why a submitted operation was not accepted; `reason` is meant for the API caller. */
export class PoolError extends Error {
  reason: string;
  constructor(reason: string) {
    super(reason);
    this.name = "PoolError";
    this.reason = reason;
  }
}

/** Events emitted after an operation passed validation (names as the Beacon API event topics). */
export interface PoolEvents {
  /** a pre-electra single attestation, or any fork's aggregate from an aggregate-and-proof */
  attestation: [Attestation];
  single_attestation: [electra.SingleAttestation];
  voluntary_exit: [phase0.SignedVoluntaryExit];
  proposer_slashing: [phase0.ProposerSlashing];
  attester_slashing: [AttesterSlashing];
  bls_to_execution_change: [capella.SignedBLSToExecutionChange];
  contribution_and_proof: [altair.SignedContributionAndProof];
}

export type PoolEmitter = EventEmitter<PoolEvents>;

/** Every event the pools emit. */
export const POOL_EVENTS = [
  "attestation",
  "single_attestation",
  "voluntary_exit",
  "proposer_slashing",
  "attester_slashing",
  "bls_to_execution_change",
  "contribution_and_proof",
] as const satisfies readonly (keyof PoolEvents)[];
