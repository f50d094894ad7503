import {ForkSeq, type ForkName, isForkPostBellatrix} from "@lodestar/params";
import {executionPayloadToPayloadHeader, signedBeaconBlockToBlinded, signedBlindedBlockToFull} from "@lodestar/state-transition";
import type {ExecutionPayload, SignedBeaconBlock, SignedBlindedBeaconBlock} from "@lodestar/types";
import {byteArrayEquals, toRootHex} from "@lodestar/utils";
import type {IBeaconChain} from "../../chain/interface.ts";
import {ApiError, badRequest} from "../errors.ts";
import type {ApiContext} from "./context.ts";
import type {SignedBlindedOrFullBlock} from "../routes/beacon.ts";

/**
 * Blinded blocks: a block with its execution payload replaced by the payload's header. The node
 * publishes a blinded block when it has the payload (one it produced itself: the chain keeps the
 * last few; or that of the block itself when the node already has it: a block published again),
 * or, with `--builder`, when the relay reveals it. It publishes the unblinded block.
 */

/** The blinded form of a stored block (before bellatrix there is no payload: the block itself). */
export function blindBlock(chain: IBeaconChain, block: SignedBeaconBlock): SignedBlindedOrFullBlock {
  if (!isForkPostBellatrix(chain.config.getForkName(block.message.slot))) return block;
  return signedBeaconBlockToBlinded(chain.config, block as Parameters<typeof signedBeaconBlockToBlinded>[1]);
}

/** The payload of the blinded block's full block when the node has that block (a blinded block has the full block's root). */
async function storedPayload(chain: IBeaconChain, blinded: SignedBlindedBeaconBlock): Promise<ExecutionPayload | null> {
  const root = chain.config.getPostBellatrixForkTypes(blinded.message.slot).BlindedBeaconBlock.hashTreeRoot(blinded.message);
  const stored = await chain.getBlockByRoot(root);
  return (stored?.message.body as {executionPayload?: ExecutionPayload} | undefined)?.executionPayload ?? null;
}

/** A blinded block unblinded: the full block with its blobs and proofs, or "published" when the relay publishes it (fulu on). */
export type Unblinded = {block: SignedBeaconBlock; blobs: Uint8Array[]; kzgProofs: Uint8Array[]} | "published";

/**
 * The full block of a published blinded block of fork `fork` (the fork of its slot): with the
 * node's own payload when it has it, else through the builder relay when there is one (a relay
 * that does not reveal the payload is a 502 naming its failure: the block cannot be rebuilt);
 * without a builder, 400 when the node does not have the payload.
 */
export async function unblindThroughBuilder(ctx: ApiContext, signed: SignedBlindedOrFullBlock, fork: ForkName): Promise<Unblinded> {
  const {chain, builder} = ctx;
  const own = !isForkPostBellatrix(fork) || !builder || chain.getProducedPayload((signed as SignedBlindedBeaconBlock).message.body.executionPayloadHeader.blockHash) !== null;
  if (own || !builder) {
    const block = await unblindBlock(chain, signed, fork);
    const payload = (block.message.body as {executionPayload?: {blockHash: Uint8Array}}).executionPayload;
    const bundle = payload ? chain.getProducedBlobs(payload.blockHash) : null;
    return {block, blobs: bundle?.blobs ?? [], kzgProofs: bundle?.proofs ?? []};
  }
  const blinded = signed as SignedBlindedBeaconBlock;
  // a block published again (the node already has it) needs no relay
  const stored = await storedPayload(chain, blinded);
  if (stored) return {block: signedBlindedBlockToFull(fork, blinded, stored), blobs: [], kzgProofs: []};
  let revealed: Awaited<ReturnType<typeof builder.unblind>>;
  try {
    revealed = await builder.unblind(fork, blinded);
  } catch (e) {
    throw new ApiError(502, `Cannot publish blinded block: ${(e as Error).message}`);
  }
  if (revealed === "published") return "published";
  return {
    block: signedBlindedBlockToFull(fork, blinded, revealed.payload),
    blobs: revealed.blobsBundle?.blobs ?? [],
    kzgProofs: revealed.blobsBundle?.proofs ?? [],
  };
}

/** The full block of a published blinded block of fork `fork` (the fork of its slot); 400 when the node does not have its payload. */
export async function unblindBlock(chain: IBeaconChain, signed: SignedBlindedOrFullBlock, fork: ForkName): Promise<SignedBeaconBlock> {
  if (!isForkPostBellatrix(fork)) return signed as SignedBeaconBlock;
  const blinded = signed as SignedBlindedBeaconBlock;
  const header = blinded.message.body.executionPayloadHeader;
  const hashHex = toRootHex(header.blockHash);
  const payload = chain.getProducedPayload(header.blockHash) ?? (await storedPayload(chain, blinded));
  if (!payload) {
    throw badRequest(`Cannot publish blinded block: this node has no builder, and the execution payload ${hashHex} is neither one it produced recently nor that of a block it has`);
  }
  const headerType = chain.config.getPostBellatrixForkTypes(blinded.message.slot).ExecutionPayloadHeader;
  const producedHeader = executionPayloadToPayloadHeader(ForkSeq[fork], payload);
  if (!byteArrayEquals(headerType.hashTreeRoot(producedHeader), headerType.hashTreeRoot(header))) {
    throw badRequest(`Cannot publish blinded block: its execution payload header does not match the payload ${hashHex} this node produced`);
  }
  return signedBlindedBlockToFull(fork, blinded, payload);
}
