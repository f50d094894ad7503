import type {ChainForkConfig} from "@lodestar/config";
import {GENESIS_SLOT, MAX_REQUEST_LIGHT_CLIENT_UPDATES, MIN_SYNC_COMMITTEE_PARTICIPANTS, type ForkPostAltair, isForkPostAltair} from "@lodestar/params";
import {type BeaconStateAllForks, type CachedBeaconStateAltair, computeSyncPeriodAtSlot} from "@lodestar/state-transition";
import {
  sszTypesFor,
  type LightClientBootstrap,
  type LightClientFinalityUpdate,
  type LightClientHeader,
  type LightClientOptimisticUpdate,
  type LightClientUpdate,
  type Root,
  type SignedBeaconBlock,
  type altair,
} from "@lodestar/types";
import {toRootHex} from "@lodestar/utils";
import type {EventEmitter} from "node:events";
import type {BeaconDb} from "../../db/beaconDb.ts";
import type {Forked} from "../../db/lightClient.ts";
import {getLogger} from "../../log.ts";
import type {ChainEvents} from "../interface.ts";
import {blockToLightClientHeader, emptyHeader, headerAtFork, stateProof} from "./proofs.ts";
import {isBetterUpdate, isFinalityUpdate, participants, toFinalityUpdate, toOptimisticUpdate} from "./updates.ts";

export type {Forked};

const log = getLogger("chain");

/** What the post-state of a block holds for light clients: enough to build its bootstrap and the update it is attested in. */
interface AttestedData {
  slot: number;
  fork: ForkPostAltair;
  header: LightClientHeader;
  currentSyncCommittee: altair.SyncCommittee;
  currentSyncCommitteeBranch: Uint8Array[];
  nextSyncCommittee: altair.SyncCommittee;
  nextSyncCommitteeBranch: Uint8Array[];
  /** `state.finalized_checkpoint.root` (zero at genesis) */
  finalizedRoot: Uint8Array;
  finalityBranch: Uint8Array[];
}

/** What the API, the network and the node read of the light-client server. */
export interface LightClientReader {
  /** The bootstrap of a finalized checkpoint block (or of a recent block), or null. */
  getBootstrap(blockRoot: Root): Promise<Forked<LightClientBootstrap> | null>;
  /** The best update of each period from `startPeriod` on, consecutive, at most `min(count, MAX_REQUEST_LIGHT_CLIENT_UPDATES)`. */
  getUpdates(startPeriod: number, count: number): Promise<Forked<LightClientUpdate>[]>;
  getFinalityUpdate(): Forked<LightClientFinalityUpdate> | null;
  getOptimisticUpdate(): Forked<LightClientOptimisticUpdate> | null;
}

export interface LightClientServerDeps {
  config: ChainForkConfig;
  db: BeaconDb;
  /** where `light_client_finality_update` and `light_client_optimistic_update` are emitted */
  emitter: EventEmitter<ChainEvents>;
}

const isZero = (bytes: Uint8Array): boolean => bytes.every((b) => b === 0);
const FINALIZED_HEADER_CACHE = 16;

/**
 * Light-client data derived from imported blocks (altair/light-client/full-node.md): each head
 * block's sync aggregate signs its parent, which gives an update; the best update of each
 * sync-committee period is kept in the database, the latest finality and optimistic updates in
 * memory, and finalized checkpoint blocks get a stored bootstrap.
 */
export class LightClientServer implements LightClientReader {
  private readonly deps: LightClientServerDeps;
  /** by block root: blocks not yet finalized, and the finalized one */
  private readonly attested = new Map<string, AttestedData>();
  /** the sync committees in use, by root, so the blocks of a period share one value */
  private readonly committees = new Map<string, altair.SyncCommittee>();
  private readonly finalizedHeaders = new Map<string, LightClientHeader>();
  private readonly bestUpdates = new Map<number, Forked<LightClientUpdate>>();
  private latestFinality: Forked<LightClientFinalityUpdate> | null = null;
  private latestOptimistic: Forked<LightClientOptimisticUpdate> | null = null;
  /** database work, in import order */
  private queue: Promise<void> = Promise.resolve();

  constructor(deps: LightClientServerDeps) {
    this.deps = deps;
  }

  /** The anchor (genesis or the finalized block at start): its data, and its bootstrap stored once. */
  initAnchor(state: BeaconStateAllForks, blockRoot: Root): void {
    this.enqueue("anchor", async () => {
      const block = await this.deps.db.blocks.get(blockRoot);
      // a checkpoint state advanced past its block has no post-state of the block to prove against
      if (!block || block.message.slot !== state.slot) return;
      this.record(block, blockRoot, state);
      await this.storeBootstrap(blockRoot);
    });
  }

  /** A block was imported: its post-state's data is kept, and a head block's sync aggregate makes an update. */
  onBlockImported(signedBlock: SignedBeaconBlock, blockRoot: Root, postState: BeaconStateAllForks, isHead: boolean): void {
    if (!isForkPostAltair(this.deps.config.getForkName(signedBlock.message.slot))) return;
    try {
      this.record(signedBlock, blockRoot, postState);
    } catch (e) {
      log.error({slot: signedBlock.message.slot, err: (e as Error).message}, "light client: could not read the block's post-state");
    }
    if (isHead) this.enqueue("update", () => this.onHead(signedBlock));
  }

  /** A new finalized checkpoint: its block gets a stored bootstrap; older data is dropped. */
  onFinalized(blockRoot: Root): void {
    this.enqueue("finalized", async () => {
      await this.storeBootstrap(blockRoot);
      const finalizedSlot = this.attested.get(toRootHex(blockRoot))?.slot;
      if (finalizedSlot === undefined) return;
      for (const [root, data] of this.attested) if (data.slot < finalizedSlot) this.attested.delete(root);
      const inUse = new Set<altair.SyncCommittee>();
      for (const data of this.attested.values()) inUse.add(data.currentSyncCommittee).add(data.nextSyncCommittee);
      for (const [root, committee] of this.committees) if (!inUse.has(committee)) this.committees.delete(root);
    });
  }

  /** Waits for the database work queued so far. */
  async close(): Promise<void> {
    await this.queue;
  }

  async getBootstrap(blockRoot: Root): Promise<Forked<LightClientBootstrap> | null> {
    return (await this.deps.db.lightClientBootstraps.get(blockRoot)) ?? this.bootstrapOf(toRootHex(blockRoot));
  }

  async getUpdates(startPeriod: number, count: number): Promise<Forked<LightClientUpdate>[]> {
    const updates: Forked<LightClientUpdate>[] = [];
    const last = startPeriod + Math.min(count, MAX_REQUEST_LIGHT_CLIENT_UPDATES) - 1;
    for (let period = startPeriod; period <= last; period++) {
      const update = await this.bestUpdate(period);
      if (update) updates.push(update);
      // the answer's periods are consecutive: it ends at the first gap after the earliest one known
      else if (updates.length > 0) break;
    }
    return updates;
  }

  getFinalityUpdate(): Forked<LightClientFinalityUpdate> | null {
    return this.latestFinality;
  }

  getOptimisticUpdate(): Forked<LightClientOptimisticUpdate> | null {
    return this.latestOptimistic;
  }

  private enqueue(what: string, task: () => Promise<void>): void {
    this.queue = this.queue.then(task).catch((e: Error) => log.error({err: e.message, task: what}, "light client: could not derive data"));
  }

  private committee(view: CachedBeaconStateAltair["currentSyncCommittee"]): altair.SyncCommittee {
    const root = toRootHex(view.hashTreeRoot());
    let committee = this.committees.get(root);
    if (!committee) this.committees.set(root, (committee = view.toValue()));
    return committee;
  }

  private record(signedBlock: SignedBeaconBlock, blockRoot: Root, postState: BeaconStateAllForks): void {
    const {config} = this.deps;
    const block = signedBlock.message;
    const fork = config.getForkName(block.slot);
    if (!isForkPostAltair(fork)) return;
    const state = postState as unknown as CachedBeaconStateAltair;
    this.attested.set(toRootHex(blockRoot), {
      slot: block.slot,
      fork,
      header: blockToLightClientHeader(config, block),
      currentSyncCommittee: this.committee(state.currentSyncCommittee),
      currentSyncCommitteeBranch: stateProof(config, postState, "currentSyncCommittee"),
      nextSyncCommittee: this.committee(state.nextSyncCommittee),
      nextSyncCommitteeBranch: stateProof(config, postState, "nextSyncCommittee"),
      finalizedRoot: state.finalizedCheckpoint.root.slice(),
      finalityBranch: stateProof(config, postState, "finalizedRoot"),
    });
  }

  /** `create_light_client_bootstrap` from the kept post-state data of a block. */
  private bootstrapOf(rootHex: string): Forked<LightClientBootstrap> | null {
    const data = this.attested.get(rootHex);
    if (!data) return null;
    return {
      fork: data.fork,
      value: {header: data.header, currentSyncCommittee: data.currentSyncCommittee, currentSyncCommitteeBranch: data.currentSyncCommitteeBranch} as LightClientBootstrap,
    };
  }

  private async storeBootstrap(blockRoot: Root): Promise<void> {
    const bootstrap = this.bootstrapOf(toRootHex(blockRoot));
    if (bootstrap && !(await this.deps.db.lightClientBootstraps.has(blockRoot))) await this.deps.db.lightClientBootstraps.put(blockRoot, bootstrap);
  }

  private async bestUpdate(period: number): Promise<Forked<LightClientUpdate> | null> {
    const cached = this.bestUpdates.get(period);
    if (cached) return cached;
    const stored = await this.deps.db.lightClientUpdates.get(period);
    if (stored) this.bestUpdates.set(period, stored);
    return stored;
  }

  /** The header of the block at `rootHex` (a finalized block), from memory or the database. */
  private async finalizedHeader(root: Uint8Array): Promise<LightClientHeader | null> {
    const rootHex = toRootHex(root);
    const known = this.attested.get(rootHex)?.header ?? this.finalizedHeaders.get(rootHex);
    if (known) return known;
    const block = await this.deps.db.blocks.get(root);
    if (!block) return null;
    const header = blockToLightClientHeader(this.deps.config, block.message);
    if (this.finalizedHeaders.size >= FINALIZED_HEADER_CACHE) this.finalizedHeaders.delete(this.finalizedHeaders.keys().next().value!);
    this.finalizedHeaders.set(rootHex, header);
    return header;
  }

  /** `create_light_client_update(state, block, attested_state, attested_block, finalized_block)` for a head block. */
  private async createUpdate(signedBlock: SignedBeaconBlock): Promise<Forked<LightClientUpdate> | null> {
    const block = signedBlock.message;
    const syncAggregate = (block.body as altair.BeaconBlockBody).syncAggregate;
    if (participants(syncAggregate) < MIN_SYNC_COMMITTEE_PARTICIPANTS) return null;
    const attested = this.attested.get(toRootHex(block.parentRoot));
    if (!attested) return null;
    const {fork} = attested;
    const empty = sszTypesFor(fork).LightClientUpdate.defaultValue() as LightClientUpdate;
    // `next_sync_committee` is only useful if the message is signed by the current sync committee
    const samePeriod = computeSyncPeriodAtSlot(attested.slot) === computeSyncPeriodAtSlot(block.slot);
    let finalizedHeader = emptyHeader(fork);
    let finalityBranch = empty.finalityBranch;
    if (isZero(attested.finalizedRoot)) {
      // genesis is finalized: the zero root, proven, with the empty header
      finalityBranch = attested.finalityBranch;
    } else {
      const header = await this.finalizedHeader(attested.finalizedRoot);
      // a checkpoint of an epoch without blocks before it holds the genesis block's root, which no
      // light client can be shown: validate_light_client_update takes a finalized header at the
      // genesis slot for the zero root, and full-node.md asserts that root is zero; no finality then
      if (header && header.beacon.slot !== GENESIS_SLOT) {
        finalizedHeader = headerAtFork(header, fork);
        finalityBranch = attested.finalityBranch;
      }
    }
    return {
      fork,
      value: {
        attestedHeader: attested.header,
        nextSyncCommittee: samePeriod ? attested.nextSyncCommittee : empty.nextSyncCommittee,
        nextSyncCommitteeBranch: samePeriod ? attested.nextSyncCommitteeBranch : empty.nextSyncCommitteeBranch,
        finalizedHeader,
        finalityBranch,
        syncAggregate,
        signatureSlot: block.slot,
      } as LightClientUpdate,
    };
  }

  private async onHead(signedBlock: SignedBeaconBlock): Promise<void> {
    const update = await this.createUpdate(signedBlock);
    if (!update) return;
    const {fork, value} = update;
    const attestedSlot = value.attestedHeader.beacon.slot;
    const period = computeSyncPeriodAtSlot(attestedSlot);
    // only updates signed in their attested period compete for the period's best
    if (period === computeSyncPeriodAtSlot(value.signatureSlot)) {
      const best = await this.bestUpdate(period);
      if (!best || isBetterUpdate(value, best.value)) {
        this.bestUpdates.set(period, update);
        await this.deps.db.lightClientUpdates.put(period, update);
      }
    }
    const newer = (latest: {value: {attestedHeader: LightClientHeader; signatureSlot: number}} | null) =>
      !latest ||
      attestedSlot > latest.value.attestedHeader.beacon.slot ||
      (attestedSlot === latest.value.attestedHeader.beacon.slot && value.signatureSlot > latest.value.signatureSlot);

    if (newer(this.latestOptimistic)) {
      const attestedChanged = this.latestOptimistic?.value.attestedHeader.beacon.slot !== attestedSlot;
      this.latestOptimistic = {fork, value: toOptimisticUpdate(value)};
      if (attestedChanged) this.deps.emitter.emit("light_client_optimistic_update", this.latestOptimistic);
    }
    if (isFinalityUpdate(value) && newer(this.latestFinality)) {
      const previous = this.latestFinality?.value;
      const max = value.syncAggregate.syncCommitteeBits.bitLen;
      const supermajority = (u: {syncAggregate: altair.SyncAggregate}) => participants(u.syncAggregate) * 3 > max * 2;
      this.latestFinality = {fork, value: toFinalityUpdate(value)};
      // pushed when the finalized header changes, and once more when supermajority participation comes later
      const finalizedChanged = !previous || previous.finalizedHeader.beacon.slot !== value.finalizedHeader.beacon.slot;
      if (finalizedChanged || (!supermajority(previous) && supermajority(value))) {
        this.deps.emitter.emit("light_client_finality_update", this.latestFinality);
      }
    }
  }
}
