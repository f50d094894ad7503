import type {CachedBeaconStateAllForks} from "@lodestar/state-transition";
import type {Root} from "@lodestar/types";
import type {SignatureVerifier} from "../bls/verifier.ts";
import type {NodeMetrics} from "../metrics/nodeMetrics.ts";
import type {BlockBuilder} from "./builderChoice.ts";

/** What the chain is made with (beaconChain.ts): the node's settings, and the state it starts from. */

export interface ChainOptions {
  /** the node's graffiti setting, read at block production time */
  graffiti: () => Uint8Array;
  /** fee recipient of a proposer (registered through prepare_beacon_proposer, or the default) */
  feeRecipientOf: (validatorIndex: number) => Uint8Array;
  /** with `--builder`: the external block builder proposals may take their payload from */
  builder?: BlockBuilder | null;
  /** the state cache's budget (default 2 GiB) */
  stateCacheBytes?: number;
  /** how long a block waits for its blobs or columns before peers are asked (default: a slot, at most 4 s) */
  dataAvailabilityWaitMs?: number;
  /** how that wait sleeps (a timer unless given: tests pass one that moves their clock) */
  dataAvailabilitySleep?: (ms: number) => Promise<void>;
  /** delete sidecars of finalized blocks past their retention window (default: true) */
  pruneSidecars?: boolean;
  /** with --metrics: the time of each stage of a block import */
  blockImportTimes?: NodeMetrics["blockImport"];
  /** checks blocks' and submissions' signatures (default: on the calling thread; the node passes its worker pool) */
  verifier?: SignatureVerifier;
}

export interface ChainAnchor {
  state: CachedBeaconStateAllForks;
  blockRoot: Root;
  executionBlockHash: Uint8Array | null;
}
