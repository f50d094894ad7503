import type {CachedBeaconStateAllForks} from "@lodestar/state-transition";
import type {BeaconBlock, Root, SignedBeaconBlock, Slot, deneb, fulu} from "@lodestar/types";
import {fromHex, toRootHex} from "@lodestar/utils";
import type {BeaconDb} from "../db/beaconDb.ts";
import type {ForkChoice} from "../forkchoice/index.ts";
import type {Archiver} from "./archiver.ts";
import type {StateRegenerator} from "./regen.ts";

export interface ChainReadsDeps {
  db: BeaconDb;
  forkChoice(): ForkChoice;
  regen: StateRegenerator;
  archiver: Archiver;
  headRoot(): string;
  getHeadState(): CachedBeaconStateAllForks;
  currentSlot(): Slot;
  /** the first slot fork choice holds; older canonical blocks are in the canonical index */
  anchorSlot(): Slot;
}

/** The chain's read side: states by block root, slot or state root, blocks, and stored sidecars. */
export class ChainReads {
  private readonly deps: ChainReadsDeps;

  constructor(deps: ChainReadsDeps) {
    this.deps = deps;
  }

  getStateByBlockRoot(blockRoot: Root): Promise<CachedBeaconStateAllForks | null> {
    return this.deps.regen.getPostState(toRootHex(blockRoot));
  }

  async getBlockPreState(block: BeaconBlock): Promise<CachedBeaconStateAllForks | null> {
    const parentHex = toRootHex(block.parentRoot);
    if (this.deps.forkChoice().hasBlock(parentHex)) return this.deps.regen.getStateAtSlot(parentHex, block.slot);
    // A finalized block whose parent fork choice has pruned: the canonical state just before it.
    if (block.slot === 0) return null;
    const before = await this.getStateBySlot(block.slot - 1);
    return before ? this.deps.regen.advance(parentHex, before, block.slot) : null;
  }

  getStateBySlot(slot: Slot): Promise<CachedBeaconStateAllForks | null> {
    if (slot > this.deps.currentSlot()) return Promise.resolve(null);
    return this.deps.regen.getCanonicalStateAtSlot(this.deps.headRoot(), slot);
  }

  async getStateByStateRoot(stateRoot: Root): Promise<CachedBeaconStateAllForks | null> {
    const rootHex = toRootHex(stateRoot);
    for (const node of this.deps.forkChoice().getAllNodes()) {
      if (node.stateRoot === rootHex) return this.deps.regen.getPostState(node.blockRoot);
    }
    // Empty-slot states of the recent canonical chain: the head state remembers their roots.
    const head = this.deps.getHeadState();
    const historyLength = head.stateRoots.length;
    for (let slot = Math.max(0, head.slot - historyLength); slot < head.slot; slot++) {
      if (Buffer.from(head.stateRoots.get(slot % historyLength)).equals(stateRoot)) return this.getStateBySlot(slot);
    }
    if (Buffer.from(head.hashTreeRoot()).equals(stateRoot)) return head;
    return this.deps.archiver.getStateByRoot(stateRoot);
  }

  async getBlockByRoot(blockRoot: Root): Promise<SignedBeaconBlock | null> {
    return this.deps.db.blocks.get(blockRoot);
  }

  getBlockBytesByRoot(blockRoot: Root): Promise<Uint8Array | null> {
    return this.deps.db.blocks.getBytes(blockRoot);
  }

  async getCanonicalBlockAtSlot(slot: Slot): Promise<SignedBeaconBlock | null> {
    const root = await this.getCanonicalBlockRootAtSlot(slot);
    return root ? this.deps.db.blocks.get(root) : null;
  }

  async getCanonicalBlockRootAtSlot(slot: Slot): Promise<Root | null> {
    if (slot >= this.deps.anchorSlot()) {
      const root = this.deps.forkChoice().getAncestor(this.deps.headRoot(), slot);
      if (!root) return null;
      const node = this.deps.forkChoice().getBlock(root);
      return node && node.slot === slot ? fromHex(root) : null;
    }
    return this.deps.db.canonicalBlocks.get(slot);
  }

  async getBlobSidecars(blockRoot: Root): Promise<deneb.BlobSidecar[] | null> {
    return this.deps.db.blobSidecars.get(blockRoot);
  }

  getDataColumnSidecarBytes(blockRoot: Root, column: number): Promise<Uint8Array | null> {
    return this.deps.db.dataColumnSidecars.getBytes(blockRoot, column);
  }

  async getDataColumnSidecars(blockRoot: Root, columns?: number[]): Promise<fulu.DataColumnSidecar[]> {
    const stored = await this.deps.db.dataColumnSidecars.columnsOf(blockRoot);
    const wanted = columns ? stored.filter((c) => columns.includes(c)) : stored;
    const sidecars = await Promise.all(wanted.map((c) => this.deps.db.dataColumnSidecars.get(blockRoot, c)));
    return sidecars.filter((s): s is fulu.DataColumnSidecar => s !== null);
  }
}
