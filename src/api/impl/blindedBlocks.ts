import {ForkSeq, type ForkName, isForkPostBellatrix} from "@lodestar/params";
import {executionPayloadToPayloadHeader, signedBeaconBlockToBlinded, signedBlindedBlockToFull} from "@lodestar/state-transition";
import type {ExecutionPayload, SignedBeaconBlock, SignedBlindedBeaconBlock} from "@lodestar/types";
import {byteArrayEquals, toRootHex} from "@lodestar/utils";
import type {IBeaconChain} from "../../chain/interface.ts";
import {badRequest} from "../errors.ts";
import type {SignedBlindedOrFullBlock} from "../routes/beacon.ts";

/**
 * Blinded blocks: a block with its execution payload replaced by the payload's header. The
 * node has no builder, so it can publish a blinded block only when it has the payload: one it
 * produced itself (the chain keeps the last few), or that of the block itself when the node
 * already has it (a block published again). It publishes the unblinded block.
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
