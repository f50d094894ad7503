import type {BeaconConfig} from "@lodestar/config";
import {computeEpochAtSlot} from "@lodestar/state-transition";
import type {phase0} from "@lodestar/types";
import type {IBeaconChain} from "../chain/interface.ts";

/** The p2p Status message (v1 fields, and v2's earliest available slot from fulu). */
export type Status = phase0.Status & {earliestAvailableSlot?: number};

/** The goodbye reasons of the p2p spec, and the ones clients agree on beyond it. */
export const GoodbyeReason = {
  CLIENT_SHUTDOWN: 1n,
  IRRELEVANT_NETWORK: 2n,
  FAULT_OR_ERROR: 3n,
  UNABLE_TO_VERIFY_NETWORK: 128n,
  TOO_MANY_PEERS: 129n,
  SCORE_TOO_LOW: 250n,
  BANNED: 251n,
} as const;

export function goodbyeReasonName(reason: bigint): string {
  return Object.entries(GoodbyeReason).find(([, v]) => v === reason)?.[0] ?? `unknown (${reason})`;
}

const ZERO_ROOT = new Uint8Array(32);

/** The current fork digest: the fork boundary of the wall-clock epoch. */
export function currentForkDigest(config: BeaconConfig, epoch: number): Uint8Array {
  return config.forkBoundary2ForkDigest(config.getForkBoundaryAtEpoch(epoch));
}

/** Our Status: the spec sends the zero root as the finalized root while genesis is finalized. */
export function ourStatus(chain: Pick<IBeaconChain, "config" | "currentSlot" | "getHead" | "getFinalizedCheckpoint">, earliestAvailableSlot: number): Status {
  const finalized = chain.getFinalizedCheckpoint();
  const head = chain.getHead();
  return {
    forkDigest: currentForkDigest(chain.config, computeEpochAtSlot(chain.currentSlot())),
    finalizedRoot: finalized.epoch === 0 ? ZERO_ROOT : finalized.root,
    finalizedEpoch: finalized.epoch,
    headRoot: head.blockRoot,
    headSlot: head.slot,
    earliestAvailableSlot,
  };
}

/**
 * Our Status as peers get it now. Its earliest_available_slot follows backfill down, once
 * backfill exists (it asks the peers of the peer manager, which answers with this status): 0 before.
 */
export class StatusSource {
  private earliest: () => number = () => 0;
  private readonly chain: Parameters<typeof ourStatus>[0];

  constructor(chain: Parameters<typeof ourStatus>[0]) {
    this.chain = chain;
  }

  /** Where earliest_available_slot is read from. */
  followHistory(earliest: () => number): void {
    this.earliest = earliest;
  }

  current(): Status {
    return ourStatus(this.chain, this.earliest());
  }
}

/** Why a peer's Status shows it is not on our chain, or null when it may be. */
export async function irrelevantReason(
  ours: Status,
  theirs: Status,
  currentSlot: number,
  checkpointRootAt: (epoch: number) => Promise<Uint8Array | null>
): Promise<string | null> {
  if (!bytesEqual(ours.forkDigest, theirs.forkDigest)) return `fork digest ${hex(theirs.forkDigest)} is not ours (${hex(ours.forkDigest)})`;
  // a head beyond the wall clock (with a slot of tolerance) is a peer of another chain or a broken clock
  if (theirs.headSlot > currentSlot + 1) return `head slot ${theirs.headSlot} is ahead of the current slot ${currentSlot}`;
  if (theirs.finalizedEpoch === 0 || theirs.finalizedEpoch > ours.finalizedEpoch) return null;
  if (theirs.finalizedEpoch === ours.finalizedEpoch) {
    return bytesEqual(theirs.finalizedRoot, ours.finalizedRoot) ? null : `finalized root at epoch ${theirs.finalizedEpoch} differs from ours`;
  }
  // their finalized checkpoint is older than ours: it must be on our finalized chain where we still know it
  const root = await checkpointRootAt(theirs.finalizedEpoch);
  return root === null || bytesEqual(root, theirs.finalizedRoot) ? null : `finalized root at epoch ${theirs.finalizedEpoch} is not on our chain`;
}

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);
}

function hex(b: Uint8Array): string {
  return "0x" + Buffer.from(b).toString("hex");
}
