import type {BeaconConfig} from "@lodestar/config";
import {getBlockProposerSignatureSet, type ISignatureSet, type PubkeyCache} from "@lodestar/state-transition";
import type {SignedBeaconBlock} from "@lodestar/types";
import {byteArrayEquals, toRootHex} from "@lodestar/utils";
import {setImmediate as nextTurn} from "node:timers/promises";
import type {SignatureVerifier} from "../bls/verifier.ts";

/**
 * The checks of a backfill batch: the blocks a peer served for a range below the lowest block
 * the node has must be that block's ancestors (each block's root is the parent root of the one
 * above it: the chain of roots from the trusted anchor down), and each must carry its
 * proposer's signature. Gaps between slots are empty slots; only the roots count.
 */

export type BackfillErrorCode = "NOT_LINKED" | "BAD_SIGNATURE" | "DATA_UNAVAILABLE";

export class BackfillBatchError extends Error {
  readonly code: BackfillErrorCode;

  constructor(code: BackfillErrorCode, message: string) {
    super(message);
    this.name = "BackfillBatchError";
    this.code = code;
  }
}

/** A block with its root (hash tree root of its message). */
export interface LinkedBlock {
  block: SignedBeaconBlock;
  root: Uint8Array;
}

/**
 * Checks that `blocks` (ascending by slot, as blocks_by_range serves them) are, newest first, the
 * block whose root is `expectedRoot`, then its parent, and so on: every block of the batch is on
 * the chain, none left out between them. Returns them newest first with their roots, and the
 * parent root the next (older) batch must end with. Hashing a block is CPU work: the event loop
 * gets a turn between blocks.
 */
export async function linkBatch(config: BeaconConfig, blocks: SignedBeaconBlock[], expectedRoot: Uint8Array): Promise<{linked: LinkedBlock[]; nextExpected: Uint8Array}> {
  const linked: LinkedBlock[] = [];
  let expected = expectedRoot;
  for (let i = blocks.length - 1; i >= 0; i--) {
    const block = blocks[i];
    const root = config.getForkTypes(block.message.slot).BeaconBlock.hashTreeRoot(block.message);
    if (!byteArrayEquals(root, expected)) {
      throw new BackfillBatchError(
        "NOT_LINKED",
        `block ${toRootHex(root)} at slot ${block.message.slot} is not the expected ancestor ${toRootHex(expected)}`
      );
    }
    linked.push({block, root});
    expected = block.message.parentRoot;
    if (i > 0) await nextTurn();
  }
  return {linked, nextExpected: expected};
}

/** Signature sets a verifier job takes at once: small enough for one turn of the event loop when checks run on it. */
const SETS_PER_JOB = 4;

/**
 * Whether every block's proposer signature holds, checked in batches by `verifier`: the signing
 * domain is that of the fork of the block's epoch and the genesis validators root (`config`),
 * the key that of the proposer in `validators` (a state at or after the blocks: a validator
 * stays in the registry once added). The genesis block (slot 0) is not signed.
 */
export async function proposerSignaturesValid(
  config: BeaconConfig,
  blocks: LinkedBlock[],
  validators: {pubkeyCache: PubkeyCache; count: number},
  verifier: SignatureVerifier
): Promise<boolean> {
  const sets: ISignatureSet[] = [];
  for (const {block} of blocks) {
    if (block.message.slot === 0) continue;
    if (block.message.proposerIndex >= validators.count) return false;
    sets.push(getBlockProposerSignatureSet(config, block));
  }
  const jobs: Promise<boolean>[] = [];
  for (let i = 0; i < sets.length; i += SETS_PER_JOB) jobs.push(verifier.verify(sets.slice(i, i + SETS_PER_JOB), validators.pubkeyCache));
  return (await Promise.all(jobs)).every(Boolean);
}
