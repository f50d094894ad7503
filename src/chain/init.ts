import {createBeaconConfig, type ChainForkConfig} from "@lodestar/config";
import {ForkSeq} from "@lodestar/params";
import {
  type CachedBeaconStateAllForks,
  type CachedBeaconStateExecutions,
  computeAnchorCheckpoint,
  createCachedBeaconState,
  createPubkeyCache,
} from "@lodestar/state-transition";
import type {SignedBeaconBlock} from "@lodestar/types";
import {toRootHex} from "@lodestar/utils";
import type {Clock} from "../clock/clock.ts";
import type {BeaconDb} from "../db/beaconDb.ts";
import type {ExecutionEngine} from "../execution/engine.ts";
import {getLogger} from "../log.ts";
import {BeaconChain, type ChainAnchor, type ChainOptions} from "./beaconChain.ts";
import {BlockError} from "./interface.ts";
import {createInteropGenesisState} from "./genesis.ts";

const log = getLogger("chain");

export interface GenesisSpec {
  validatorCount: number;
  /** unix seconds; used only when the data dir has no chain yet */
  genesisTime: number;
  /** when set and the data dir already has a chain, it must match */
  requestedGenesisTime?: number;
}

/** The genesis block: an empty block whose header the genesis state already carries. */
function genesisBlock(config: ChainForkConfig, state: CachedBeaconStateAllForks): SignedBeaconBlock {
  const types = config.getForkTypes(0);
  const block = types.SignedBeaconBlock.defaultValue();
  block.message.stateRoot = state.hashTreeRoot();
  return block as SignedBeaconBlock;
}

function anchorOf(config: ChainForkConfig, state: CachedBeaconStateAllForks): ChainAnchor {
  const {blockHeader} = computeAnchorCheckpoint(config, state);
  const executionBlockHash =
    config.getForkSeq(state.slot) >= ForkSeq.bellatrix ? (state as CachedBeaconStateExecutions).latestExecutionPayloadHeader.blockHash : null;
  const isPreMerge = !executionBlockHash || executionBlockHash.every((b) => b === 0);
  return {state, blockRoot: config.getForkTypes(state.slot).BeaconBlockHeader.hashTreeRoot(blockHeader), executionBlockHash: isPreMerge ? null : executionBlockHash};
}

/**
 * Opens the chain of a data dir, or creates the dev genesis in an empty one. Restart resumes
 * from the latest archived finalized state and re-imports the unfinalized blocks stored after
 * it: nothing is replayed from genesis.
 */
export async function initChain(
  chainConfig: ChainForkConfig,
  db: BeaconDb,
  engine: ExecutionEngine,
  makeClock: (genesisTime: number) => Clock,
  genesis: GenesisSpec,
  opts: ChainOptions
): Promise<BeaconChain> {
  const storedGenesisTime = await db.chainMeta.genesisTime.get();
  let anchorState: CachedBeaconStateAllForks;
  if (storedGenesisTime === null) {
    log.info({validators: genesis.validatorCount, genesisTime: genesis.genesisTime}, "creating dev genesis");
    anchorState = createInteropGenesisState(chainConfig, genesis.validatorCount, genesis.genesisTime);
    const block = genesisBlock(chainConfig, anchorState);
    const root = chainConfig.getForkTypes(0).BeaconBlock.hashTreeRoot(block.message);
    const checkpoint = {epoch: 0, root};
    await db.batch([
      db.blocks.putOp(root, block),
      db.canonicalBlocks.putOp(0, root),
      ...db.stateArchive.putOp(anchorState),
      db.chainMeta.genesisTime.putOp(anchorState.genesisTime),
      db.chainMeta.genesisValidatorsRoot.putOp(anchorState.genesisValidatorsRoot),
      db.chainMeta.anchorCheckpoint.putOp(checkpoint),
      db.chainMeta.finalizedCheckpoint.putOp(checkpoint),
      db.chainMeta.justifiedCheckpoint.putOp(checkpoint),
    ]);
  } else {
    if (genesis.requestedGenesisTime !== undefined && genesis.requestedGenesisTime !== storedGenesisTime) {
      throw new Error(`--genesis-time ${genesis.requestedGenesisTime} differs from the stored chain's genesis time ${storedGenesisTime}`);
    }
    const archived = await db.stateArchive.getLatest();
    if (!archived) throw new Error(`the database in ${db.dir} has a genesis time but no archived state`);
    if (archived.validators.length < genesis.validatorCount && archived.slot === 0) {
      throw new Error(`the stored genesis has ${archived.validators.length} validators, not ${genesis.validatorCount}`);
    }
    const config = createBeaconConfig(chainConfig, archived.genesisValidatorsRoot);
    anchorState = createCachedBeaconState(archived, {config, pubkeyCache: createPubkeyCache()});
  }

  const config = createBeaconConfig(chainConfig, anchorState.genesisValidatorsRoot);
  const chain = new BeaconChain(config, db, engine, makeClock(anchorState.genesisTime), anchorOf(chainConfig, anchorState), opts);

  const hot = await db.hotBlocks.getAll();
  const toReplay = hot.filter((b) => b.slot > anchorState.slot).sort((a, b) => a.slot - b.slot);
  let replayed = 0;
  for (const {blockRoot: root} of toReplay) {
    const block = await db.blocks.get(root);
    if (!block) continue;
    try {
      await chain.importTrustedBlock(block);
      replayed++;
    } catch (e) {
      if (!(e instanceof BlockError && e.code === "ALREADY_KNOWN")) log.warn({root: toRootHex(root), err: (e as Error).message}, "stored block not re-imported");
    }
  }
  const head = chain.getHead();
  log.info({anchorSlot: anchorState.slot, replayed, headSlot: head.slot, head: toRootHex(head.blockRoot), finalizedEpoch: chain.getFinalizedCheckpoint().epoch}, "chain ready");
  return chain;
}
