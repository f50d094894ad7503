import type {ChainForkConfig} from "@lodestar/config";
import {type BeaconStateAllForks, computeAnchorCheckpoint, computeEpochAtSlot} from "@lodestar/state-transition";
import type {SignedBeaconBlock} from "@lodestar/types";
import {toRootHex} from "@lodestar/utils";
import {readStateBytesHeader} from "../chain/genesis.ts";
import {getLogger} from "../log.ts";

const log = getLogger("sync");

const FETCH_TIMEOUT_MS = 120_000;

/** A finalized state and its block, checked to belong together; what checkpoint sync starts from. */
export interface CheckpointAnchor {
  state: BeaconStateAllForks;
  block: SignedBeaconBlock;
  blockRoot: Uint8Array;
  slot: number;
}

async function fetchSsz(base: string, path: string): Promise<Uint8Array> {
  const url = new URL(path, base);
  const res = await fetch(url, {headers: {accept: "application/octet-stream"}, signal: AbortSignal.timeout(FETCH_TIMEOUT_MS)});
  if (res.status !== 200) throw new Error(`${url} answered ${res.status}: ${(await res.text()).slice(0, 200)}`);
  return new Uint8Array(await res.arrayBuffer());
}

/**
 * Fetches the finalized state and the block it belongs to from any Beacon API node, and checks
 * that they match each other and this node's chain config: the state's fork version is the one
 * the config has at its slot, and the block's header is the state's latest block header.
 */
export async function fetchCheckpointAnchor(url: string, config: ChainForkConfig): Promise<CheckpointAnchor> {
  log.info({url}, "checkpoint sync: fetching the finalized state");
  const stateBytes = await fetchSsz(url, "/eth/v2/debug/beacon/states/finalized");
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
  log.info({slot, epoch: computeEpochAtSlot(slot), blockRoot: toRootHex(blockRoot)}, "checkpoint sync: fetching the block of the state");
  const blockBytes = await fetchSsz(url, `/eth/v2/beacon/blocks/${toRootHex(blockRoot)}`);
  const block = config.getForkTypes(blockHeader.slot).SignedBeaconBlock.deserialize(blockBytes) as SignedBeaconBlock;
  const gotRoot = config.getForkTypes(block.message.slot).BeaconBlock.hashTreeRoot(block.message);
  if (!Buffer.from(gotRoot).equals(blockRoot)) {
    throw new Error(`checkpoint sync: the block ${toRootHex(gotRoot)} from ${url} is not the state's latest block ${toRootHex(blockRoot)}`);
  }
  log.info({slot, checkpointEpoch: checkpoint.epoch, blockRoot: toRootHex(blockRoot)}, "checkpoint sync: state and block match");
  return {state, block, blockRoot, slot};
}
