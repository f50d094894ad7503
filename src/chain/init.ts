import {createBeaconConfig, type ChainForkConfig} from "@lodestar/config";
import {ForkSeq} from "@lodestar/params";
import {
  type BeaconStateAllForks,
  type CachedBeaconStateAllForks,
  type CachedBeaconStateExecutions,
  computeAnchorCheckpoint,
  createCachedBeaconState,
  createPubkeyCache,
} from "@lodestar/state-transition";
import type {SignedBeaconBlock} from "@lodestar/types";
import {byteArrayEquals, toRootHex} from "@lodestar/utils";
import type {Clock} from "../clock/clock.ts";
import type {BeaconDb} from "../db/beaconDb.ts";
import type {ExecutionEngine} from "../execution/engine.ts";
import {getLogger} from "../log.ts";
import {BeaconChain} from "./beaconChain.ts";
import type {ChainAnchor, ChainOptions} from "./chainOptions.ts";
import {BlockError} from "./interface.ts";
import {createInteropGenesisState, genesisStateFromBytes, readStateBytesHeader} from "./genesis.ts";

/** A finalized state and its block, checked to belong together; what checkpoint sync starts from. */
export interface CheckpointAnchor {
  state: BeaconStateAllForks;
  block: SignedBeaconBlock;
  blockRoot: Uint8Array;
  slot: number;
}

const log = getLogger("chain");

export interface GenesisSpec {
  /** interop validators of the dev genesis (not used with genesisState) */
  validatorCount: number;
  /** unix seconds of the dev genesis; used only when the data dir has no chain yet (not with genesisState) */
  genesisTime: number;
  /** when set, the chain's genesis time must be this (the stored one, or genesisState's) */
  requestedGenesisTime?: number;
  /**
   * An SSZ BeaconState at slot 0 to start from instead of the interop dev genesis
   * (`--genesis-state`); on a data dir that has a chain already, it must be that chain's genesis.
   */
  genesisState?: Uint8Array;
  /** a finalized state and its block from another node (`--checkpoint-sync-url`), for an empty data dir */
  checkpoint?: CheckpointAnchor;
}

/**
 * The genesis block: the empty block of the genesis fork whose header the genesis state
 * carries. Refused when the header is not that of an empty block (its body could not be rebuilt).
 */
function genesisBlock(config: ChainForkConfig, state: CachedBeaconStateAllForks, anchorRoot: Uint8Array): SignedBeaconBlock {
  const {slot, proposerIndex, parentRoot} = state.latestBlockHeader;
  const types = config.getForkTypes(slot);
  const block = types.SignedBeaconBlock.defaultValue();
  Object.assign(block.message, {slot, proposerIndex, parentRoot, stateRoot: state.hashTreeRoot()});
  if (!byteArrayEquals(types.BeaconBlock.hashTreeRoot(block.message), anchorRoot)) {
    throw new Error(`the genesis state's latest block header (root ${toRootHex(anchorRoot)}) is not that of an empty genesis block`);
  }
  return block as SignedBeaconBlock;
}

/** The genesis state of a new chain: the given one, or the interop dev genesis. */
function createGenesisState(config: ChainForkConfig, genesis: GenesisSpec): CachedBeaconStateAllForks {
  if (!genesis.genesisState) {
    log.info({validators: genesis.validatorCount, genesisTime: genesis.genesisTime}, "creating dev genesis");
    return createInteropGenesisState(config, genesis.validatorCount, genesis.genesisTime);
  }
  const state = genesisStateFromBytes(config, genesis.genesisState);
  if (genesis.requestedGenesisTime !== undefined && genesis.requestedGenesisTime !== state.genesisTime) {
    throw new Error(`--genesis-time ${genesis.requestedGenesisTime} differs from the genesis state's genesis time ${state.genesisTime}`);
  }
  log.info(
    {validators: state.validators.length, genesisTime: state.genesisTime, genesisValidatorsRoot: toRootHex(state.genesisValidatorsRoot)},
    "starting from the given genesis state"
  );
  return state;
}

/** A genesis state given for a data dir that has a chain already must be that chain's genesis. */
async function checkGivenGenesis(db: BeaconDb, bytes: Uint8Array, storedGenesisTime: number): Promise<void> {
  const given = readStateBytesHeader(bytes);
  const storedRoot = await db.chainMeta.genesisValidatorsRoot.get();
  if (given.genesisTime !== storedGenesisTime || !storedRoot || !byteArrayEquals(given.genesisValidatorsRoot, storedRoot)) {
    throw new Error(
      `the genesis state (genesis time ${given.genesisTime}, validators root ${toRootHex(given.genesisValidatorsRoot)}) is not the genesis of ` +
        `the chain stored in ${db.dir} (genesis time ${storedGenesisTime}, validators root ${storedRoot ? toRootHex(storedRoot) : "none"}); ` +
        "use another data dir"
    );
  }
}

/** The state of a checkpoint anchor, with its caches. */
function checkpointState(config: ChainForkConfig, state: BeaconStateAllForks): CachedBeaconStateAllForks {
  return createCachedBeaconState(state, {config: createBeaconConfig(config, state.genesisValidatorsRoot), pubkeyCache: createPubkeyCache()});
}

function anchorOf(config: ChainForkConfig, state: CachedBeaconStateAllForks): ChainAnchor {
  const {blockHeader} = computeAnchorCheckpoint(config, state);
  const executionBlockHash =
    config.getForkSeq(state.slot) >= ForkSeq.bellatrix ? (state as CachedBeaconStateExecutions).latestExecutionPayloadHeader.blockHash : null;
  const isPreMerge = !executionBlockHash || executionBlockHash.every((b) => b === 0);
  return {state, blockRoot: config.getForkTypes(state.slot).BeaconBlockHeader.hashTreeRoot(blockHeader), executionBlockHash: isPreMerge ? null : executionBlockHash};
}

/**
 * Opens the chain of a data dir, or creates its genesis in an empty one (the interop dev
 * genesis, or the genesis state given in `genesis.genesisState`). Restart resumes
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
    let block: SignedBeaconBlock;
    let root: Uint8Array;
    let checkpoint: {epoch: number; root: Uint8Array};
    if (genesis.checkpoint) {
      anchorState = checkpointState(chainConfig, genesis.checkpoint.state);
      ({block, blockRoot: root} = genesis.checkpoint);
      checkpoint = {epoch: computeAnchorCheckpoint(chainConfig, anchorState).checkpoint.epoch, root};
      log.info({slot: anchorState.slot, epoch: checkpoint.epoch, root: toRootHex(root)}, "starting from a checkpoint state; the blocks before it are backfilled from peers");
    } else {
      anchorState = createGenesisState(chainConfig, genesis);
      root = anchorOf(chainConfig, anchorState).blockRoot;
      block = genesisBlock(chainConfig, anchorState, root);
      checkpoint = {epoch: 0, root};
    }
    await db.batch([
      db.blocks.putOp(root, block),
      db.canonicalBlocks.putOp(block.message.slot, root),
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
    if (genesis.genesisState) await checkGivenGenesis(db, genesis.genesisState, storedGenesisTime);
    const archived = await db.stateArchive.getLatestVerified();
    if (!archived) throw new Error(`the database in ${db.dir} has a genesis time but no archived state`);
    if (!genesis.genesisState && archived.validators.length < genesis.validatorCount && archived.slot === 0) {
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
  const optimistic = toReplay.filter((b) => b.validity === "optimistic").length;
  for (const {blockRoot: root, validity} of toReplay) {
    // found invalid by the engine: not imported again, nor its descendants (invalid too)
    if (validity === "invalid") continue;
    const block = await db.blocks.getVerified(root);
    if (!block) continue;
    try {
      await chain.importTrustedBlock(block, validity);
      replayed++;
    } catch (e) {
      if (!(e instanceof BlockError && e.code === "ALREADY_KNOWN")) log.warn({root: toRootHex(root), err: (e as Error).message}, "stored block not re-imported");
    }
  }
  const head = chain.getHead();
  log.info({anchorSlot: anchorState.slot, replayed, optimistic, invalidSkipped: toReplay.filter((b) => b.validity === "invalid").length, headSlot: head.slot, head: toRootHex(head.blockRoot), finalizedEpoch: chain.getFinalizedCheckpoint().epoch}, "chain ready");
  return chain;
}
