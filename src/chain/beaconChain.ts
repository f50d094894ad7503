import {type SignatureVerifier, verifyOnThisThread} from "../bls/verifier.ts";
import type {BeaconConfig} from "@lodestar/config";
import {type CachedBeaconStateAllForks, computeStartSlotAtEpoch} from "@lodestar/state-transition";
import {SLOTS_PER_EPOCH} from "@lodestar/params";
import type {BeaconBlock, ExecutionPayload, Root, SignedBeaconBlock, Slot, deneb, fulu, phase0} from "@lodestar/types";
import {fromHex, toRootHex} from "@lodestar/utils";
import {EventEmitter} from "node:events";
import type {Clock} from "../clock/clock.ts";
import type {BeaconDb} from "../db/beaconDb.ts";
import {DiskFullError} from "../db/diskFull.ts";
import type {BlobsBundle, ExecutionEngine} from "../execution/engine.ts";
import {ForkChoice, type CheckpointHex, type ProtoBlock} from "../forkchoice/index.ts";
import {getLogger} from "../log.ts";
import {OperationPools} from "../pools/index.ts";
import {Archiver} from "./archiver.ts";
import {ChainReads} from "./chainReads.ts";
import {SidecarRetention} from "./blobs/retention.ts";
import {DataAvailability} from "./blobs/dataAvailability.ts";
import {type PublishedSidecars, acceptPublishedSidecars, sidecarsOfPublishedBlock} from "./blobs/published.ts";
import {BlockError, type ChainEvents, type HeadInfo, type IBeaconChain, type ImportedBlock, type ProduceBlockArgs, type ProducedBlock} from "./interface.ts";
import {ValidatorLiveness} from "./liveness.ts";
import {LightClientServer} from "./lightClient/server.ts";
import {PayloadAttributesEvents} from "./payloadAttributes.ts";
import {emitHeadChange, headInfoOf} from "./headEvents.ts";
import {produceBlock} from "./produceBlock.ts";
import {ProducedPayloads} from "./producedPayloads.ts";
import {anchorProtoBlock} from "./protoBlock.ts";
import {HeadStates} from "./headStates.ts";
import {EpochAdvance} from "./epochAdvance.ts";
import {TargetShufflings} from "./shufflingCache.ts";
import {JustifiedBalances} from "./justifiedBalances.ts";
import {PendingChildren} from "./pendingChildren.ts";
import {attestationDataOnHead} from "./attestationData.ts";
import {EngineVerdicts} from "./engineVerdicts.ts";
import {type FinalizationDeps, finalizeCheckpoint} from "./finalization.ts";
import {type ImportDeps, importBlock} from "./importBlock.ts";
import type {ChainAnchor, ChainOptions} from "./chainOptions.ts";

const log = getLogger("chain");
const PROPOSER_SCORE_BOOST = 40;

export class BeaconChain implements IBeaconChain {
  readonly emitter = new EventEmitter<ChainEvents>();
  readonly liveness = new ValidatorLiveness();
  readonly genesisTime: number;
  readonly genesisValidatorsRoot: Root;
  readonly forkChoice: ForkChoice;
  readonly pools: OperationPools;
  readonly dataAvailability: DataAvailability;
  readonly lightClient: LightClientServer;
  /** the state cache and regeneration, and the states on the head */
  private readonly states: HeadStates;
  private readonly epochAdvance: EpochAdvance;
  private readonly payloadAttributes: PayloadAttributesEvents;
  private readonly justifiedBalances: JustifiedBalances;
  /** blocks being imported, and gossip blocks waiting for one of them as their parent */
  readonly pendingChildren: PendingChildren;
  /** the committees of attestations, by their target */
  readonly targetShufflings: TargetShufflings;
  private readonly producedPayloads = new ProducedPayloads();
  private readonly engineVerdicts: EngineVerdicts;
  private readonly archiver: Archiver;
  /** state, block and sidecar lookups */
  private readonly reads: ChainReads;
  private readonly sidecarRetention: SidecarRetention | null;
  private head: ProtoBlock;
  private headInfo: {of: ProtoBlock; info: HeadInfo} | null = null;
  private anchorSlot: number;
  /** the finalized epoch whose archiving has been done */
  private finalizedEpoch: number;
  /** serialises imports: fork choice and the caches change one block at a time */
  private importQueue: Promise<unknown> = Promise.resolve();
  private readonly onSlotListener: (slot: number) => void;
  /** what finalizing a checkpoint touches (finalization.ts) */
  private readonly finalization: FinalizationDeps;
  /** what importing a block touches (importBlock.ts) */
  private readonly importDeps: ImportDeps;

  readonly config: BeaconConfig;
  readonly db: BeaconDb;
  readonly engine: ExecutionEngine;
  readonly clock: Clock;
  private readonly opts: ChainOptions;
  readonly verifier: SignatureVerifier;

  constructor(config: BeaconConfig, db: BeaconDb, engine: ExecutionEngine, clock: Clock, anchor: ChainAnchor, opts: ChainOptions) {
    this.config = config;
    this.db = db;
    this.engine = engine;
    this.clock = clock;
    this.opts = opts;
    this.genesisTime = anchor.state.genesisTime;
    this.genesisValidatorsRoot = anchor.state.genesisValidatorsRoot;
    this.verifier = opts.verifier ?? verifyOnThisThread;
    const anchorRoot = toRootHex(anchor.blockRoot);
    this.anchorSlot = anchor.state.slot;
    this.states = new HeadStates({
      config,
      forkChoice: () => this.forkChoice,
      headRoot: () => this.head.blockRoot,
      anchor: {root: anchorRoot, state: anchor.state},
      anchorSlot: () => this.anchorSlot,
      getBlock: (root) => db.blocks.get(root),
      getArchivedState: (slot) => this.archiver.getHistoricalState(slot),
      cacheBytes: opts.stateCacheBytes,
    });
    const {regen} = this.states;
    this.justifiedBalances = new JustifiedBalances({cachedStateAt: (root, slot) => regen.cachedStateAt(root, slot), getStateAtSlot: (root, slot) => regen.getStateAtSlot(root, slot), getHeadState: () => this.getHeadState()});
    this.forkChoice = new ForkChoice({
      anchor: anchorProtoBlock(anchor.state, anchorRoot, anchor.executionBlockHash),
      currentSlot: clock.currentSlot(),
      opts: {slotsPerEpoch: SLOTS_PER_EPOCH, secondsPerSlot: config.SECONDS_PER_SLOT, proposerScoreBoostPercent: PROPOSER_SCORE_BOOST},
      getJustifiedBalances: (checkpoint) => this.justifiedBalances.get(checkpoint),
    });
    this.head = this.forkChoice.getHead();
    this.finalizedEpoch = this.forkChoice.getFinalizedCheckpoint().epoch;
    this.archiver = new Archiver(config, db, () => this.getHeadState().epochCtx.pubkeyCache);
    this.reads = new ChainReads({
      db,
      forkChoice: () => this.forkChoice,
      regen,
      archiver: this.archiver,
      headRoot: () => this.head.blockRoot,
      getHeadState: () => this.getHeadState(),
      currentSlot: () => this.currentSlot(),
      anchorSlot: () => this.anchorSlot,
    });
    this.pendingChildren = new PendingChildren(() => clock.currentSlot());
    this.targetShufflings = new TargetShufflings({forkChoice: () => this.forkChoice, headRoot: () => this.head.blockRoot, getHeadStateAtEpoch: (epoch) => this.getHeadStateAtEpoch(epoch), getStateAtSlot: (root, slot) => regen.getStateAtSlot(root, slot)});
    this.sidecarRetention = opts.pruneSidecars === false ? null : new SidecarRetention(config, db);
    this.dataAvailability = new DataAvailability({config, db, engine, currentSlot: () => clock.currentSlot(), waitMs: opts.dataAvailabilityWaitMs, sleep: opts.dataAvailabilitySleep});
    this.pools = new OperationPools({
      config,
      currentSlot: () => clock.currentSlot(),
      getStateForEpoch: (epoch) => this.getHeadStateAtEpoch(epoch),
      getTargetShuffling: (target) => this.targetShufflings.get(target),
      pubkeyCache: () => this.getHeadState().epochCtx.pubkeyCache,
      hasBlock: (root) => this.forkChoice.hasBlock(root),
      onAttestationVotes: (indices, root, targetEpoch, slot) => {
        this.liveness.record(targetEpoch, indices);
        for (const index of indices) this.forkChoice.onAttestation(index, root, targetEpoch, slot);
      },
      verifier: this.verifier,
    });
    this.lightClient = new LightClientServer({config, db, emitter: this.emitter});
    this.lightClient.initAnchor(anchor.state, anchor.blockRoot);
    this.engineVerdicts = new EngineVerdicts({
      engine,
      forkChoice: () => this.forkChoice,
      forkAtSlot: (slot) => config.getForkName(slot),
      serialized: (task) => this.serialized(task),
      updateHead: () => this.updateHeadAndFinality(),
      storeValidity: (blocks, validity) => this.db.batch(blocks.map((b) => this.db.hotBlocks.putOp(b.slot, fromHex(b.blockRoot), validity))),
    });
    const {forkChoice, pools, archiver, sidecarRetention, lightClient, emitter} = this;
    const stateCache = this.states.cache;
    this.payloadAttributes = new PayloadAttributesEvents({config, emitter, headRoot: () => this.head.blockRoot, stateAt: (root, slot) => regen.getStateAtSlot(root, slot), feeRecipientOf: opts.feeRecipientOf});
    this.finalization = {forkChoice, regen, stateCache, pools, archiver, sidecarRetention, lightClient, emitter, currentSlot: () => this.currentSlot()};
    this.importDeps = {
      config,
      clock,
      db,
      engine,
      verifier: this.verifier,
      forkChoice,
      regen,
      stateCache,
      engineVerdicts: this.engineVerdicts,
      dataAvailability: this.dataAvailability,
      liveness: this.liveness,
      lightClient,
      emitter,
      blockImportTimes: opts.blockImportTimes,
      currentSlot: () => this.currentSlot(),
      updateHead: () => this.updateHeadAndFinality(),
      payloadAttributesWanted: () => this.payloadAttributes.wanted(),
      emitPayloadAttributes: (slot) => this.payloadAttributes.emit(slot),
    };
    this.onSlotListener = (slot) => this.onSlot(slot);
    clock.on("slot", this.onSlotListener);
    this.epochAdvance = new EpochAdvance({clock, headSlot: () => this.head.slot, advanceHeadInto: (epoch) => this.states.atEpoch(epoch)});
  }

  /** Stops reacting to the clock and waits for the block being imported, if any. */
  async close(): Promise<void> {
    this.clock.off("slot", this.onSlotListener);
    this.epochAdvance.stop();
    await this.importQueue;
    await this.sidecarRetention?.whenIdle();
    await this.dataAvailability.close();
    await this.lightClient.close();
  }

  currentSlot(): Slot {
    return this.clock.currentSlot();
  }

  /** Milliseconds since the start of `slot` on the node's clock (negative before it). */
  msIntoSlot(slot: Slot): number {
    return this.clock.msIntoSlot(slot);
  }

  /** The head, made once per head (asked by every head-dependent request): shared, so never to be changed. */
  getHead(): HeadInfo {
    if (this.headInfo?.of !== this.head) this.headInfo = {of: this.head, info: headInfoOf(this.head)};
    return this.headInfo.info;
  }

  /** States held in memory (a metric). */
  cachedStateCount(): number {
    return this.states.cache.size;
  }

  cachedStateBytes(): number {
    return this.states.cache.bytes;
  }

  getHeadState(): CachedBeaconStateAllForks {
    return this.states.headState();
  }

  getFinalizedCheckpoint(): phase0.Checkpoint {
    const cp = this.forkChoice.getFinalizedCheckpoint();
    return {epoch: cp.epoch, root: fromHex(cp.root)};
  }

  getJustifiedCheckpoint(): phase0.Checkpoint {
    const cp = this.forkChoice.getJustifiedCheckpoint();
    return {epoch: cp.epoch, root: fromHex(cp.root)};
  }

  getHeadStateAtEpoch(epoch: number): Promise<CachedBeaconStateAllForks> {
    return this.states.atEpoch(epoch);
  }

  getStateByBlockRoot(blockRoot: Root): Promise<CachedBeaconStateAllForks | null> { return this.reads.getStateByBlockRoot(blockRoot); }
  getBlockPreState(block: BeaconBlock): Promise<CachedBeaconStateAllForks | null> { return this.reads.getBlockPreState(block); }
  getStateBySlot(slot: Slot): Promise<CachedBeaconStateAllForks | null> { return this.reads.getStateBySlot(slot); }
  getStateByStateRoot(stateRoot: Root): Promise<CachedBeaconStateAllForks | null> { return this.reads.getStateByStateRoot(stateRoot); }
  getBlockByRoot(blockRoot: Root): Promise<SignedBeaconBlock | null> { return this.reads.getBlockByRoot(blockRoot); }
  getBlockBytesByRoot(blockRoot: Root): Promise<Uint8Array | null> { return this.reads.getBlockBytesByRoot(blockRoot); }
  getCanonicalBlockAtSlot(slot: Slot): Promise<SignedBeaconBlock | null> { return this.reads.getCanonicalBlockAtSlot(slot); }
  getCanonicalBlockRootAtSlot(slot: Slot): Promise<Root | null> { return this.reads.getCanonicalBlockRootAtSlot(slot); }
  getBlobSidecars(blockRoot: Root): Promise<deneb.BlobSidecar[] | null> { return this.reads.getBlobSidecars(blockRoot); }
  getDataColumnSidecars(blockRoot: Root, columns?: number[]): Promise<fulu.DataColumnSidecar[]> { return this.reads.getDataColumnSidecars(blockRoot, columns); }
  getDataColumnSidecarBytes(blockRoot: Root, column: number): Promise<Uint8Array | null> { return this.reads.getDataColumnSidecarBytes(blockRoot, column); }
  blobsOfColumns(columns: fulu.DataColumnSidecar[]): Promise<Uint8Array[]> { return this.dataAvailability.columnSources.blobsOf(columns); }

  isCanonical(blockRoot: Root): boolean {
    const rootHex = toRootHex(blockRoot);
    if (this.forkChoice.hasBlock(rootHex)) return this.forkChoice.isDescendant(rootHex, this.head.blockRoot);
    return false;
  }

  async importBlock(signedBlock: SignedBeaconBlock): Promise<ImportedBlock> {
    const block = signedBlock.message;
    const blockRoot = this.config.getForkTypes(block.slot).BeaconBlock.hashTreeRoot(block);
    // a block that cannot be imported anyway does not wait for its data
    if (this.forkChoice.hasBlock(toRootHex(blockRoot))) throw new BlockError("ALREADY_KNOWN", `block ${toRootHex(blockRoot)} is already imported`);
    if (!this.forkChoice.hasBlock(toRootHex(block.parentRoot))) throw new BlockError("PARENT_UNKNOWN", `parent ${toRootHex(block.parentRoot)} of block at slot ${block.slot} is unknown`);
    const end = this.pendingChildren.begin(toRootHex(blockRoot));
    try {
      await this.dataAvailability.whenAvailable(signedBlock, blockRoot);
      const imported = await this.serialized(() => importBlock(this.importDeps, signedBlock, false));
      end({kind: "imported"});
      return imported;
    } catch (error) {
      end({kind: "failed", error});
      throw error;
    }
  }

  /** Blocks read back from our own database at start-up: verified when first imported, optimistic if the engine had not validated their payload. */
  importTrustedBlock(signedBlock: SignedBeaconBlock, validity: "valid" | "optimistic" = "valid"): Promise<ImportedBlock> {
    return this.serialized(() => importBlock(this.importDeps, signedBlock, true, validity === "optimistic"));
  }

  /** Runs `task` after every earlier import, tick or finalization has finished. */
  private serialized<T>(task: () => Promise<T>): Promise<T> {
    const result = this.importQueue.then(task);
    this.importQueue = result.catch(() => undefined);
    return result;
  }

  async produceBlock(args: ProduceBlockArgs): Promise<ProducedBlock> {
    const head = await this.serialized(async () => {
      this.forkChoice.onTick(this.currentSlot());
      return this.updateHeadAndFinality();
    });
    // the head may have reached the slot while earlier imports ran: a block must come after its parent
    if (head.slot >= args.slot) throw new BlockError("NOT_LATER_THAN_PARENT", `slot ${args.slot} is not after the head slot ${head.slot}`);
    const preState = await this.states.regen.getStateAtSlot(head.blockRoot, args.slot);
    if (!preState) throw new Error(`no state for head ${head.blockRoot}`);
    const deps = {config: this.config, engine: this.engine, pools: this.pools, defaultGraffiti: this.opts.graffiti, feeRecipientOf: this.opts.feeRecipientOf, builder: this.opts.builder};
    return this.producedPayloads.remember(await produceBlock(deps, preState, fromHex(head.blockRoot), args));
  }

  getProducedPayload(blockHash: Uint8Array): ExecutionPayload | null {
    return this.producedPayloads.get(blockHash);
  }

  getProducedBlobs(blockHash: Uint8Array): BlobsBundle | null {
    return this.producedPayloads.getBlobs(blockHash);
  }

  acceptPublishedBlobs(signedBlock: SignedBeaconBlock, blobs: Uint8Array[], proofs: Uint8Array[]): PublishedSidecars {
    const published = sidecarsOfPublishedBlock(this.config, signedBlock, blobs, proofs);
    acceptPublishedSidecars(this.dataAvailability, this.emitter, published);
    return published;
  }

  async produceAttestationData(committeeIndex: number, slot: Slot): Promise<phase0.AttestationData> {
    return attestationDataOnHead(this.config, this.head, this.states.atSlot(slot), committeeIndex, slot);
  }

  /** Given fork choice's head, if the head moved, records it, emits head (and chain_reorg) and tells the engine. */
  private recomputeHead(newHead: ProtoBlock): ProtoBlock {
    const oldHead = this.head;
    if (newHead.blockRoot === oldHead.blockRoot) return newHead;
    this.head = newHead;
    emitHeadChange(this.emitter, this.forkChoice, oldHead, newHead, this.anchorSlot);
    this.pools.opPool.pruneIncluded(this.getHeadState());
    // a start takes its head from fork choice, not from this record: a full disk (said once by the database) loses nothing here
    void this.db.chainMeta.headRoot.put(fromHex(newHead.blockRoot)).catch((e: Error) => (e instanceof DiskFullError ? log.debug({err: e.message}, "head root not stored: the disk is full") : log.error({err: e.message}, "could not store head root")));
    this.engineVerdicts.notifyHead(newHead);
    return newHead;
  }

  /** Whether fork choice holds this block as imported before the engine judged its payload. */
  isOptimistic(blockRoot: Root): boolean {
    return this.forkChoice.getValidity(toRootHex(blockRoot)) === "optimistic";
  }

  isHeadOptimistic(): boolean {
    return this.forkChoice.getValidity(this.head.blockRoot) === "optimistic";
  }

  writesPausedError(): Error | null {
    return this.db.writesPausedError();
  }

  /**
   * Fork choice may move the head, and at an epoch start realize new checkpoints: after each
   * change, record the head and, once a new epoch is finalized, archive and prune.
   */
  private async updateHeadAndFinality(): Promise<ProtoBlock> {
    // a new justified checkpoint's state, regenerated if need be, for the weights (awaited only
    // then: the common case takes no turn of the event loop)
    const justified = this.forkChoice.getJustifiedCheckpoint();
    if (!this.justifiedBalances.isPrepared(justified)) await this.justifiedBalances.prepare(justified);
    const newHead = this.forkChoice.updateHead();
    // a branch unused for a while may have left the state cache: its head's state comes back first
    await this.states.ensureCached(newHead.blockRoot);
    const head = this.recomputeHead(newHead);
    const finalized = this.forkChoice.getFinalizedCheckpoint();
    // pinned anew each time: the checkpoints move at epoch starts without the head moving, and a
    // state left pinned after its block is pruned would stay cached for good
    this.states.pin([head.blockRoot, finalized.root, this.forkChoice.getJustifiedCheckpoint().root]);
    if (finalized.epoch > this.finalizedEpoch) {
      this.finalizedEpoch = finalized.epoch;
      this.anchorSlot = await finalizeCheckpoint(this.finalization, finalized, this.anchorSlot);
    }
    return head;
  }

  private onSlot(slot: number): void {
    void this.serialized(async () => {
      this.forkChoice.onTick(slot);
      const head = await this.updateHeadAndFinality();
      // until the engine has judged the head, ask again each slot (an engine that was syncing answers once it has caught up)
      if (this.forkChoice.getValidity(head.blockRoot) === "optimistic") this.engineVerdicts.notifyHead(head);
      if (this.payloadAttributes.wanted()) await this.payloadAttributes.emit(slot + 1);
    }).catch((e: Error) => log.error({slot, err: e.message}, "slot processing failed"));
    this.pools.prune(slot);
    this.pendingChildren.prune(slot);
    this.dataAvailability.pruneBefore(computeStartSlotAtEpoch(this.forkChoice.getFinalizedCheckpoint().epoch));
  }
}
