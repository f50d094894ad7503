import {createHash} from "node:crypto";

/**
 * compute_fork_digest as consensus specs v1.6.1 write it, for checking the node against:
 * phase0's first four bytes of compute_fork_data_root(version, genesis_validators_root), and from
 * fulu on that xored with the hash of the blob parameters in force (fulu/beacon-chain.md).
 */

export interface ForkSchedule {
  /** [fork version, activation epoch] from genesis on, in order */
  forks: Array<[version: Uint8Array, epoch: number]>;
  FULU_FORK_EPOCH: number;
  ELECTRA_FORK_EPOCH: number;
  MAX_BLOBS_PER_BLOCK_ELECTRA: number;
  BLOB_SCHEDULE: ReadonlyArray<{EPOCH: number; MAX_BLOBS_PER_BLOCK: number}>;
}

const sha256 = (...parts: Uint8Array[]) => new Uint8Array(createHash("sha256").update(Buffer.concat(parts)).digest());
const uint64 = (n: number) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(n));
  return b;
};

/** phase0 compute_fork_data_root: hash_tree_root(ForkData(version, root)), two 32-byte chunks. */
export function forkDataRoot(version: Uint8Array, genesisValidatorsRoot: Uint8Array): Uint8Array {
  const chunk = new Uint8Array(32);
  chunk.set(version);
  return sha256(chunk, genesisValidatorsRoot);
}

/** The fork version in force at `epoch` (compute_fork_version). */
export function forkVersionAt(schedule: ForkSchedule, epoch: number): Uint8Array {
  return schedule.forks.filter(([, e]) => e <= epoch).at(-1)![0];
}

/** fulu get_blob_parameters: the latest schedule entry at or before the epoch, else electra's. */
export function blobParametersAt(schedule: ForkSchedule, epoch: number): {epoch: number; maxBlobsPerBlock: number} {
  const entry = [...schedule.BLOB_SCHEDULE].sort((a, b) => b.EPOCH - a.EPOCH).find((e) => epoch >= e.EPOCH);
  return entry ? {epoch: entry.EPOCH, maxBlobsPerBlock: entry.MAX_BLOBS_PER_BLOCK} : {epoch: schedule.ELECTRA_FORK_EPOCH, maxBlobsPerBlock: schedule.MAX_BLOBS_PER_BLOCK_ELECTRA};
}

export function forkDigestAt(schedule: ForkSchedule, genesisValidatorsRoot: Uint8Array, epoch: number): Uint8Array {
  const base = forkDataRoot(forkVersionAt(schedule, epoch), genesisValidatorsRoot).subarray(0, 4);
  if (epoch < schedule.FULU_FORK_EPOCH) return base;
  const blob = blobParametersAt(schedule, epoch);
  const mask = sha256(uint64(blob.epoch), uint64(blob.maxBlobsPerBlock));
  return base.map((b, i) => b ^ mask[i]);
}

/** Every epoch where the digest changes: the forks' and, from fulu, the blob schedule's. */
export function digestBoundaries(schedule: ForkSchedule): number[] {
  const epochs = [...schedule.forks.map(([, e]) => e), ...schedule.BLOB_SCHEDULE.map((e) => e.EPOCH).filter((e) => e >= schedule.FULU_FORK_EPOCH)];
  return [...new Set(epochs.filter(Number.isFinite))].sort((a, b) => a - b);
}
