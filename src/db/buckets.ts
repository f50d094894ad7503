/**
 * The bucket table of the node's LevelDB. Every key starts with one byte naming its bucket.
 *
 * Rules: a number, once used, is never given to another kind of data. When a bucket is retired,
 * delete its line below and add it to the "retired" list, so old data dirs never get misread.
 */
export const Bucket = {
  /** small named values (genesis, checkpoints, head, graffiti, chain fingerprint): name (utf8) → value */
  chainMeta: 1,
  /** block root (32) → SignedBeaconBlock (SSZ) */
  block: 2,
  /** slot (u64 BE) → block root (32), canonical finalized chain */
  canonicalBlockRoot: 3,
  /** slot (u64 BE) → finalized BeaconState (SSZ) */
  stateArchive: 4,
  /** state root (32) → slot (u64 BE) of an archived state */
  stateRootIndex: 5,
  /**
   * slot (u64 BE) ‖ block root (32) → the payload's validity (nothing: valid or no payload; 1:
   * optimistic; 2: invalid): blocks not yet finalized, re-imported at start-up
   */
  hotBlock: 6,
  /** block root (32) → the block's BlobSidecars (SSZ list, deneb and electra) */
  blobSidecars: 7,
  /** block root (32) ‖ column index (u16 BE) → DataColumnSidecar (SSZ, fulu) */
  dataColumnSidecar: 8,
  /** sync-committee period (u64 BE) → fork seq (1 byte) ‖ the period's best LightClientUpdate (SSZ) */
  lightClientBestUpdate: 9,
  /** block root (32) → fork seq (1 byte) ‖ LightClientBootstrap (SSZ) of a finalized checkpoint block */
  lightClientBootstrap: 10,
} as const;

export type Bucket = (typeof Bucket)[keyof typeof Bucket];

/*
 * Retired bucket numbers (never reuse):
 *   0 — reserved, never used (keeps an all-zero key from meaning anything)
 */
