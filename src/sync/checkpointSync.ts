import type {ChainForkConfig} from "@lodestar/config";
import {type BeaconStateAllForks, computeAnchorCheckpoint, computeEpochAtSlot, computeStartSlotAtEpoch} from "@lodestar/state-transition";
import type {SignedBeaconBlock} from "@lodestar/types";
import {toRootHex} from "@lodestar/utils";
import {readStateBytesHeader} from "../chain/genesis.ts";
import type {CheckpointAnchor} from "../chain/init.ts";
import {getLogger} from "../log.ts";
import {type WssCheckpoint, checkWssCheckpoint, ensureWithinWeakSubjectivityPeriod} from "./weakSubjectivity.ts";

const log = getLogger("sync");

const FETCH_TIMEOUT_MS = 120_000;

async function fetchSsz(base: string, path: string): Promise<Uint8Array> {
  const url = new URL(path, base);
  const res = await fetch(url, {headers: {accept: "application/octet-stream"}, signal: AbortSignal.timeout(FETCH_TIMEOUT_MS)});
  if (res.status !== 200) throw new Error(`${url} answered ${res.status}: ${(await res.text()).slice(0, 200)}`);
  return new Uint8Array(await res.arrayBuffer());
}

export interface CheckpointSyncOptions {
  /** `--wss-checkpoint`: the state is fetched at its epoch's first slot and must be that checkpoint's */
  wssCheckpoint?: WssCheckpoint;
  /** unix seconds now, for the weak subjectivity period (the wall clock by default) */
  nowSeconds?: () => number;
}

/**
 * Fetches the finalized state (with a trusted checkpoint: the state at the first slot of its
 * epoch) and the block it belongs to from any Beacon API node, and checks that they match each
 * other, the trusted checkpoint, and this node's chain config: the state's fork version is the
 * one the config has at its slot, and the block's header is the state's latest block header. A
 * state older than the weak subjectivity period is refused.
 */
export async function fetchCheckpointAnchor(url: string, config: ChainForkConfig, opts: CheckpointSyncOptions = {}): Promise<CheckpointAnchor> {
  const {wssCheckpoint} = opts;
  const stateId = wssCheckpoint ? String(computeStartSlotAtEpoch(wssCheckpoint.epoch)) : "finalized";
  log.info({url, state: stateId}, wssCheckpoint ? "checkpoint sync: fetching the state of the trusted checkpoint" : "checkpoint sync: fetching the finalized state");
  const stateBytes = await fetchSsz(url, `/eth/v2/debug/beacon/states/${stateId}`);
  const {slot} = readStateBytesHeader(stateBytes);
  const state = config.getForkTypes(slot).BeaconState.deserializeToViewDU(stateBytes) as BeaconStateAllForks;
  const expectedVersion = config.getForkInfo(slot).version;
  if (!Buffer.from(state.fork.currentVersion).equals(expectedVersion)) {
    throw new Error(
      `checkpoint sync: the state at slot ${slot} has fork version ${toRootHex(state.fork.currentVersion).slice(0, 10)}, ` +
        `this node's fork schedule has ${toRootHex(expectedVersion).slice(0, 10)} there: start it with the same chain options as ${url}`
    );
  }
  const {blockHeader, checkpoint} = computeAnchorCheckpoint(config, state);
  const blockRoot = config.getForkTypes(blockHeader.slot).BeaconBlockHeader.hashTreeRoot(blockHeader);
  if (wssCheckpoint) checkWssCheckpoint({epoch: checkpoint.epoch, blockRoot}, wssCheckpoint, url);
  const {period, currentEpoch} = ensureWithinWeakSubjectivityPeriod(config, state, (opts.nowSeconds ?? (() => Date.now() / 1000))());
  log.info({slot, epoch: computeEpochAtSlot(slot), blockRoot: toRootHex(blockRoot)}, "checkpoint sync: fetching the block of the state");
  const blockBytes = await fetchSsz(url, `/eth/v2/beacon/blocks/${toRootHex(blockRoot)}`);
  const block = config.getForkTypes(blockHeader.slot).SignedBeaconBlock.deserialize(blockBytes) as SignedBeaconBlock;
  const gotRoot = config.getForkTypes(block.message.slot).BeaconBlock.hashTreeRoot(block.message);
  if (!Buffer.from(gotRoot).equals(blockRoot)) {
    throw new Error(`checkpoint sync: the block ${toRootHex(gotRoot)} from ${url} is not the state's latest block ${toRootHex(blockRoot)}`);
  }
  log.info({slot, checkpointEpoch: checkpoint.epoch, blockRoot: toRootHex(blockRoot), wsPeriod: period, currentEpoch}, "checkpoint sync: state and block match");
  if (!wssCheckpoint) {
    log.notice(
      {url, root: toRootHex(blockRoot), epoch: checkpoint.epoch},
      `checkpoint sync: trusting ${url} for the finalized checkpoint ${toRootHex(blockRoot)}:${checkpoint.epoch} (block root:epoch); ` +
        "check that another node or a block explorer has this block root at this epoch, or pass --wss-checkpoint ROOT:EPOCH to have it checked"
    );
  }
  return {state, block, blockRoot, slot};
}
