import type {BeaconBlock, ExecutionPayload} from "@lodestar/types";
import type {BlobsBundle} from "../execution/engine.ts";
import {toRootHex} from "@lodestar/utils";

/** How many produced payloads are kept: a proposer signs the block of its slot within a few slots. */
const DEFAULT_KEPT = 16;

/**
 * The execution payloads of the last blocks this node produced, by block hash. The node has
 * no builder, so a blinded block can be published only when its payload is one of these:
 * the block is unblinded with the payload kept here.
 */
export class ProducedPayloads {
  private readonly byHash = new Map<string, {payload: ExecutionPayload; blobsBundle: BlobsBundle | undefined}>();
  private readonly maxKept: number;

  constructor(maxKept = DEFAULT_KEPT) {
    this.maxKept = maxKept;
  }

  /** Keeps the payload of a produced block (blocks before bellatrix have none); returns `produced` unchanged. */
  remember<T extends {block: BeaconBlock; blobsBundle?: BlobsBundle}>(produced: T): T {
    const payload = (produced.block.body as {executionPayload?: ExecutionPayload}).executionPayload;
    if (payload) {
      const key = toRootHex(payload.blockHash);
      this.byHash.delete(key);
      this.byHash.set(key, {payload, blobsBundle: produced.blobsBundle});
      // a Map iterates in insertion order: the first key is the oldest
      while (this.byHash.size > this.maxKept) this.byHash.delete(this.byHash.keys().next().value as string);
    }
    return produced;
  }

  get(blockHash: Uint8Array): ExecutionPayload | null {
    return this.byHash.get(toRootHex(blockHash))?.payload ?? null;
  }

  getBlobs(blockHash: Uint8Array): BlobsBundle | null {
    return this.byHash.get(toRootHex(blockHash))?.blobsBundle ?? null;
  }
}
