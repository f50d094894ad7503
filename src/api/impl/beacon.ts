import {isForkPostFulu} from "@lodestar/params";
import type {ForkName} from "@lodestar/params";
import {type CachedBeaconStateAllForks, computeEpochAtSlot} from "@lodestar/state-transition";
import {getValidatorStatus, mapToGeneralStatus, type SignedBeaconBlock} from "@lodestar/types";
import {byteArrayEquals} from "@lodestar/utils";
import type {BlockError, BlockErrorCode, IBeaconChain} from "../../chain/interface.ts";
import type {PublishedSidecars} from "../../chain/blobs/published.ts";
import type {ValidatorId} from "../codecs.ts";
import {badRequest, notFound} from "../errors.ts";
import type {BlockHeaderResponse, BroadcastValidation, SignedBlindedOrFullBlock, ValidatorResponse, ValidatorStatusFilter, beaconRoutes} from "../routes/beacon.ts";
import type {Handlers} from "../routes/types.ts";
import {lazyList} from "../streaming.ts";
import {blindBlock, unblindThroughBuilder} from "./blindedBlocks.ts";
import {type ApiContext, broadcast} from "./context.ts";
import {answerCacheOf, headKey} from "./answerCache.ts";
import {useNewerRoute} from "./newerRoute.ts";
import {blockRootOf, isFinalizedSlot, resolveBlock, resolveState, resolveStoredBlock, selectedIndices} from "./resolve.ts";
import {blobSidecars, blobsOfBlock, maxBlobsAt} from "./sidecars.ts";

/** Handlers of the Beacon tag's genesis, state and block routes. */

/** The validators named by `ids` (all when empty) with one of `statuses` (any when empty), read from the state as they are iterated. */
function validatorResponses(state: CachedBeaconStateAllForks, ids: ValidatorId[], statuses: ValidatorStatusFilter[]): Iterable<ValidatorResponse> {
  const epoch = computeEpochAtSlot(state.slot);
  const indices = selectedIndices(state, ids);
  const wanted = new Set<string>(statuses);
  return lazyList(function* () {
    for (const index of indices) {
      const validator = state.validators.getReadonly(index).toValue();
      const status = getValidatorStatus(validator, epoch);
      if (wanted.size > 0 && !wanted.has(status) && !wanted.has(mapToGeneralStatus(status))) continue;
      yield {index, balance: state.balances.get(index), status, validator};
    }
  });
}

function headerOf(chain: IBeaconChain, block: SignedBeaconBlock, root: Uint8Array, canonical: boolean): BlockHeaderResponse {
  const {slot, proposerIndex, parentRoot, stateRoot, body} = block.message;
  const bodyRoot = chain.config.getForkTypes(slot).BeaconBlockBody.hashTreeRoot(body);
  return {root, canonical, header: {message: {slot, proposerIndex, parentRoot, stateRoot, bodyRoot}, signature: block.signature}};
}

/** The canonical blocks of getBlockHeaders: at `slot`, or the child of `parentRoot`, or the head. */
async function headerBlocks(chain: IBeaconChain, slot: number | undefined, parentRoot: Uint8Array | undefined): Promise<SignedBeaconBlock[]> {
  if (slot !== undefined) {
    const block = await chain.getCanonicalBlockAtSlot(slot);
    return block && (!parentRoot || byteArrayEquals(block.message.parentRoot, parentRoot)) ? [block] : [];
  }
  if (parentRoot) {
    const parent = await chain.getBlockByRoot(parentRoot);
    if (!parent) return [];
    // the canonical child is the first canonical block after the parent
    for (let s = parent.message.slot + 1; s <= chain.getHead().slot; s++) {
      const block = await chain.getCanonicalBlockAtSlot(s);
      if (block) return byteArrayEquals(block.message.parentRoot, parentRoot) ? [block] : [];
    }
    return [];
  }
  const head = await chain.getBlockByRoot(chain.getHead().blockRoot);
  return head ? [head] : [];
}

/** Failures a block can pass gossip checks with (so it was broadcast) and still fail: 202 under `gossip` validation. */
const CONSENSUS_ONLY: ReadonlySet<BlockErrorCode> = new Set(["INVALID_STATE_ROOT", "INVALID_EXECUTION_PAYLOAD", "PARENT_PAYLOAD_INVALID", "STATE_TRANSITION_FAILED"]);

function isBlockError(err: unknown): err is BlockError {
  return err instanceof Error && err.name === "BlockError" && typeof (err as BlockError).code === "string";
}

/** The fork of a published block's slot; 400 when `Eth-Consensus-Version` names another. */
function publishedFork(chain: IBeaconChain, slot: number, fork: string | undefined): ForkName {
  const blockFork = chain.config.getForkName(slot);
  if (fork !== undefined && fork !== blockFork) throw badRequest(`Eth-Consensus-Version ${fork} does not match the fork of slot ${slot} (${blockFork})`);
  return blockFork;
}

/** The block's blobs with their proofs, as published (`SignedBlockContents`). */
interface PublishedBlobs {
  blobs: Uint8Array[];
  kzgProofs: Uint8Array[];
}

/** Broadcasts a block, then its sidecars (the block first: peers check sidecars against it). */
function broadcastBlock(ctx: ApiContext, signedBlock: SignedBeaconBlock, sidecars: PublishedSidecars): void {
  broadcast(ctx, {type: "beacon_block", data: signedBlock});
  if (sidecars.kind === "blobs") for (const data of sidecars.sidecars) broadcast(ctx, {type: "blob_sidecar", data});
  else for (const data of sidecars.sidecars) broadcast(ctx, {type: "data_column_sidecar", data});
}

/** Imports a published block with its blobs: 200 imported (or already known), 202 broadcast but not imported, else 400. */
async function publishBlock(ctx: ApiContext, signedBlock: SignedBeaconBlock, blobs: PublishedBlobs, fork: string | undefined, validation: BroadcastValidation): Promise<number> {
  publishedFork(ctx.chain, signedBlock.message.slot, fork);
  let sidecars: PublishedSidecars;
  try {
    sidecars = ctx.chain.acceptPublishedBlobs(signedBlock, blobs.blobs, blobs.kzgProofs);
  } catch (err) {
    throw badRequest(`Invalid block contents: ${(err as Error).message}`);
  }
  try {
    await ctx.chain.importBlock(signedBlock);
    broadcastBlock(ctx, signedBlock, sidecars);
    return 200;
  } catch (err) {
    if (!isBlockError(err)) throw err;
    if (err.code === "ALREADY_KNOWN") return 200;
    if (validation === "gossip" && CONSENSUS_ONLY.has(err.code)) {
      broadcastBlock(ctx, signedBlock, sidecars);
      return 202;
    }
    throw badRequest(`Invalid block: ${err.message}`);
  }
}

/** Publishes the full block of a blinded one (see blindedBlocks.ts), as publishBlock. */
async function publishBlindedBlock(ctx: ApiContext, signed: SignedBlindedOrFullBlock, fork: string | undefined, validation: BroadcastValidation): Promise<number> {
  const blockFork = publishedFork(ctx.chain, signed.message.slot, fork);
  const unblinded = await unblindThroughBuilder(ctx, signed, blockFork);
  // from fulu the relay publishes the full block: the node gets it by gossip like any other (202: not imported yet)
  if (unblinded === "published") return 202;
  return publishBlock(ctx, unblinded.block, unblinded, fork, validation);
}

export const beaconHandlers: Handlers<typeof beaconRoutes, ApiContext> = {
  async getGenesis(_args, {chain}) {
    return {data: {genesisTime: chain.genesisTime, genesisValidatorsRoot: chain.genesisValidatorsRoot, genesisForkVersion: chain.config.GENESIS_FORK_VERSION}};
  },

  async getStateRoot({stateId}, {chain}) {
    const {state, ...meta} = await resolveState(chain, stateId);
    return {data: {root: state.hashTreeRoot()}, meta};
  },

  async getStateFork({stateId}, {chain}) {
    const {state, ...meta} = await resolveState(chain, stateId);
    return {data: state.fork.toValue(), meta};
  },

  async getStateFinalityCheckpoints({stateId}, {chain}) {
    const {state, ...meta} = await resolveState(chain, stateId);
    const checkpoints = () => ({
      previousJustified: state.previousJustifiedCheckpoint.toValue(),
      currentJustified: state.currentJustifiedCheckpoint.toValue(),
      finalized: state.finalizedCheckpoint.toValue(),
    });
    return {data: stateId === "head" ? await answerCacheOf(chain).ofHeadGet(`finality_checkpoints:${headKey(chain)}`, checkpoints) : checkpoints(), meta};
  },

  async getStateValidators({stateId, id, status}, {chain}) {
    const {state, ...meta} = await resolveState(chain, stateId);
    return {data: validatorResponses(state, id ?? [], status ?? []), meta};
  },

  async postStateValidators({stateId, filter}, {chain}) {
    const {state, ...meta} = await resolveState(chain, stateId);
    return {data: validatorResponses(state, filter.ids, filter.statuses), meta};
  },

  async getStateValidator({stateId, validatorId}, {chain}) {
    const {state, ...meta} = await resolveState(chain, stateId);
    const [validator] = validatorResponses(state, [validatorId], []);
    if (!validator) throw notFound("Validator not found");
    return {data: validator, meta};
  },

  async getBlockRoot({blockId}, {chain}) {
    const {root, executionOptimistic, finalized} = await resolveBlock(chain, blockId);
    return {data: {root}, meta: {executionOptimistic, finalized}};
  },

  async getBlockHeader({blockId}, {chain}) {
    if (blockId === "head") {
      const root = chain.getHead().blockRoot;
      const data = await answerCacheOf(chain).ofHeadGet(`header:${headKey(chain)}`, async () => {
        const block = await chain.getBlockByRoot(root);
        if (!block) throw notFound("Block not found");
        return headerOf(chain, block, root, true);
      });
      return {data, meta: {executionOptimistic: chain.isOptimistic(root), finalized: isFinalizedSlot(chain, data.header.message.slot)}};
    }
    const {block, root, canonical, executionOptimistic, finalized} = await resolveBlock(chain, blockId);
    return {data: headerOf(chain, block, root, canonical), meta: {executionOptimistic, finalized}};
  },

  async getBlockHeaders({slot, parentRoot}, {chain}) {
    const blocks = await headerBlocks(chain, slot, parentRoot);
    return {
      data: blocks.map((block) => headerOf(chain, block, blockRootOf(chain, block), true)),
      meta: {executionOptimistic: false, finalized: blocks.length > 0 && blocks.every((b) => isFinalizedSlot(chain, b.message.slot))},
    };
  },

  async getBlockV2({blockId}, {chain}) {
    const {stored, executionOptimistic, finalized} = await resolveStoredBlock(chain, blockId);
    return {data: stored, meta: {version: chain.config.getForkName(stored.slot), executionOptimistic, finalized}};
  },

  async publishBlockV2({signedBlockContents, broadcastValidation, fork}, ctx) {
    return {data: await publishBlock(ctx, signedBlockContents.signedBlock, signedBlockContents, fork, broadcastValidation ?? "gossip")};
  },

  async publishBlock({signedBlockContents, fork}, ctx) {
    return {data: await publishBlock(ctx, signedBlockContents.signedBlock, signedBlockContents, fork, "gossip")};
  },

  async getBlockAttestationsV2({blockId}, {chain}) {
    const {block, executionOptimistic, finalized} = await resolveBlock(chain, blockId);
    return {data: block.message.body.attestations, meta: {version: chain.config.getForkName(block.message.slot), executionOptimistic, finalized}};
  },

  /** v2's answer: SSZ of a block from electra on is refused by the route's codec (406 naming v2). */
  async getBlockAttestations(args, ctx) {
    return beaconHandlers.getBlockAttestationsV2(args, ctx);
  },

  async getBlindedBlock({blockId}, {chain}) {
    const {block, executionOptimistic, finalized} = await resolveBlock(chain, blockId);
    return {data: blindBlock(chain, block), meta: {version: chain.config.getForkName(block.message.slot), executionOptimistic, finalized}};
  },

  async publishBlindedBlockV2({signedBlindedBlock, broadcastValidation, fork}, ctx) {
    return {data: await publishBlindedBlock(ctx, signedBlindedBlock, fork, broadcastValidation ?? "gossip")};
  },

  async publishBlindedBlock({signedBlindedBlock, fork}, ctx) {
    return {data: await publishBlindedBlock(ctx, signedBlindedBlock, fork, "gossip")};
  },

  async getBlobSidecars({blockId, indices}, {chain}) {
    const sidecars = await blobSidecars(chain, {blockId, indices: indices ?? [], limitAt: maxBlobsAt(chain), what: "blob index"});
    // The spec defines this deprecated route up to electra; from fulu on, blobs are served by getBlobs.
    if (isForkPostFulu(sidecars.meta.version)) throw useNewerRoute(`blob sidecars are not served for ${sidecars.meta.version} blocks`, "getBlobs");
    return sidecars;
  },

  async getBlobs({blockId, versionedHashes}, {chain}) {
    const {data, meta} = await blobsOfBlock(chain, blockId, versionedHashes);
    return {data, meta: {executionOptimistic: meta.executionOptimistic, finalized: meta.finalized}};
  },
};
