import type {BeaconConfig} from "@lodestar/config";
import {computeStartSlotAtEpoch} from "@lodestar/state-transition";
import type {SignedBeaconBlock, Slot} from "@lodestar/types";
import {toRootHex} from "@lodestar/utils";
import type {EventEmitter} from "node:events";
import type {SignatureVerifier} from "../bls/verifier.ts";
import type {Clock} from "../clock/clock.ts";
import type {BeaconDb} from "../db/beaconDb.ts";
import type {ExecutionEngine} from "../execution/engine.ts";
import {failpoint} from "../failpoints.ts";
import type {ForkChoice, ProtoBlock} from "../forkchoice/index.ts";
import {getLogger} from "../log.ts";
import {type NodeMetrics, stageTimer} from "../metrics/nodeMetrics.ts";
import type {DataAvailability} from "./blobs/dataAvailability.ts";
import type {EngineVerdicts} from "./engineVerdicts.ts";
import {BlockError, type ChainEvents, type ImportedBlock} from "./interface.ts";
import type {LightClientServer} from "./lightClient/server.ts";
import type {ValidatorLiveness} from "./liveness.ts";
import {toProtoBlock} from "./protoBlock.ts";
import type {StateRegenerator} from "./regen.ts";
import type {StateCache} from "./stateCache.ts";
import {InvalidPayloadError, verifyBlock} from "./verifyBlock.ts";

const log = getLogger("chain");

/** What importing a block reads and changes: the chain's parts (beaconChain.ts gives them). */
export interface ImportDeps {
  config: BeaconConfig;
  clock: Clock;
  db: BeaconDb;
  engine: ExecutionEngine;
  verifier: SignatureVerifier;
  forkChoice: ForkChoice;
  regen: StateRegenerator;
  stateCache: StateCache;
  engineVerdicts: EngineVerdicts;
  dataAvailability: DataAvailability;
  liveness: ValidatorLiveness;
  lightClient: LightClientServer;
  emitter: EventEmitter<ChainEvents>;
  blockImportTimes?: NodeMetrics["blockImport"];
  currentSlot(): Slot;
  /** fork choice's head after the import: recorded, and finality followed (beaconChain.ts) */
  updateHead(): Promise<ProtoBlock>;
  /** whether anyone follows payload_attributes (builders) */
  payloadAttributesWanted(): boolean;
  emitPayloadAttributes(slot: Slot): Promise<void>;
}

/**
 * Imports one block (the chain runs one import at a time): the checks that need no state
 * (known, future, finalized, parent known and earlier, parent's payload not invalid), then the
 * pre-state, the state transition with signatures and the engine's verdict (`trusted`: a block
 * of our own database, stored already and its signatures checked when first imported), the
 * block and its sidecars stored in one batch, fork choice and its votes, the new head, and the
 * events. `storedOptimistic`: a stored block imported before the engine judged it.
 */
export async function importBlock(deps: ImportDeps, signedBlock: SignedBeaconBlock, trusted: boolean, storedOptimistic = false): Promise<ImportedBlock> {
  const {config, clock, forkChoice, regen, engineVerdicts, emitter, db} = deps;
  const block = signedBlock.message;
  const blockRoot = config.getForkTypes(block.slot).BeaconBlock.hashTreeRoot(block);
  const rootHex = toRootHex(blockRoot);
  const parentHex = toRootHex(block.parentRoot);
  if (forkChoice.hasBlock(rootHex)) throw new BlockError("ALREADY_KNOWN", `block ${rootHex} is already imported`);
  if (!trusted && block.slot > clock.currentSlotWithTolerance(config.MAXIMUM_GOSSIP_CLOCK_DISPARITY)) {
    throw new BlockError("FUTURE_SLOT", `block slot ${block.slot} is after the current slot ${deps.currentSlot()}`);
  }
  const finalized = forkChoice.getFinalizedCheckpoint();
  if (block.slot <= computeStartSlotAtEpoch(finalized.epoch)) {
    throw new BlockError("WOULD_REVERT_FINALIZED", `block slot ${block.slot} is not after the finalized slot ${computeStartSlotAtEpoch(finalized.epoch)}`);
  }
  const parent = forkChoice.getBlock(parentHex);
  if (!parent) throw new BlockError("PARENT_UNKNOWN", `parent ${parentHex} of block at slot ${block.slot} is unknown`);
  if (block.slot <= parent.slot) throw new BlockError("NOT_LATER_THAN_PARENT", `block slot ${block.slot} is not after its parent's ${parent.slot}`);
  if (forkChoice.getValidity(parentHex) === "invalid") throw new BlockError("PARENT_PAYLOAD_INVALID", `the execution payload of parent ${parentHex} was found invalid`);

  const stages = stageTimer(deps.blockImportTimes);
  const preState = await regen.getStateAtSlot(parentHex, block.slot);
  if (!preState) throw new BlockError("PARENT_UNKNOWN", `no state for parent ${parentHex}`);
  stages.mark("pre_state");
  let verified: Awaited<ReturnType<typeof verifyBlock>>;
  try {
    verified = await verifyBlock(config, preState, signedBlock, deps.engine, deps.verifier, trusted);
  } catch (e) {
    if (e instanceof InvalidPayloadError) {
      log.warn({slot: block.slot, root: rootHex, reason: e.message}, "block rejected: the execution engine says its payload is invalid");
      await engineVerdicts.onInvalidNewPayload(parent, e);
    }
    throw e;
  }
  const {postState, indexedAttestations, executionBlockHash} = verified;
  const optimistic = verified.optimistic || storedOptimistic;
  stages.mark("verify");
  emitter.emit("block_gossip", {slot: block.slot, block: blockRoot});
  deps.liveness.recordBlock({slot: block.slot, proposerIndex: block.proposerIndex, attestations: indexedAttestations});

  if (!trusted) {
    const sidecarOps = deps.dataAvailability.takeStoreOps(signedBlock, blockRoot);
    await db.batch([db.blocks.putOp(blockRoot, signedBlock), db.hotBlocks.putOp(block.slot, blockRoot, optimistic ? "optimistic" : "valid"), ...sidecarOps]);
  }
  failpoint("import:after-store", block.slot);
  stages.mark("store");
  deps.stateCache.add(rootHex, postState, regen.preStateKey(parentHex, block.slot));

  const currentSlot = deps.currentSlot();
  const isTimely = !trusted && block.slot === currentSlot && clock.msIntoSlot(block.slot) < (config.SECONDS_PER_SLOT * 1000) / 3;
  forkChoice.onTick(Math.max(currentSlot, block.slot));
  const protoBlock = toProtoBlock(block, rootHex, postState, executionBlockHash);
  forkChoice.onBlock(protoBlock, {isTimely, optimistic});
  if (!optimistic) await engineVerdicts.onValidImport(protoBlock);
  if (optimistic && !trusted) log.warn({slot: block.slot, root: rootHex}, "imported block optimistically: the execution engine has not validated its payload yet (SYNCING or ACCEPTED)");
  for (const {data, attestingIndices} of indexedAttestations) {
    const root = toRootHex(data.beaconBlockRoot);
    for (const index of attestingIndices) forkChoice.onAttestation(index, root, data.target.epoch, data.slot);
  }
  for (const slashing of block.body.attesterSlashings) {
    const a = new Set(slashing.attestation1.attestingIndices);
    forkChoice.onAttesterSlashing(slashing.attestation2.attestingIndices.filter((i) => a.has(i)));
  }

  stages.mark("fork_choice");
  emitter.emit("block", {slot: block.slot, block: blockRoot});
  const newHead = await deps.updateHead();
  stages.mark("head");
  // the next proposal now builds on this block: builders following payload_attributes learn it now, not a slot later
  if (newHead.blockRoot === rootHex && !trusted && block.slot >= deps.currentSlot() && deps.payloadAttributesWanted()) {
    void deps.emitPayloadAttributes(block.slot + 1).catch((e: Error) => log.warn({slot: block.slot + 1, err: e.message}, "payload_attributes not emitted"));
  }
  deps.lightClient.onBlockImported(signedBlock, blockRoot, postState, newHead.blockRoot === rootHex);
  if (!trusted) {
    log.info({slot: block.slot, root: rootHex, proposer: block.proposerIndex, attestations: block.body.attestations.length, head: newHead.blockRoot === rootHex}, "imported block");
  }
  return {blockRoot, slot: block.slot, isHead: newHead.blockRoot === rootHex};
}
