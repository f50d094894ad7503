import type {SignedBeaconBlock} from "@lodestar/types";
import {toRootHex} from "@lodestar/utils";
import {BlockError, type BlockErrorCode, type IBeaconChain} from "../chain/interface.ts";
import {getLogger} from "../log.ts";
import type {PeerAction} from "../network/peers/peerScore.ts";

const log = getLogger("sync");

/** How many unknown ancestors are fetched by root before range sync is left to catch up. */
const MAX_ANCESTORS = 16;
/** blocks waiting for their parent at once */
const MAX_PENDING = 64;
/** import failures that mean the block itself is bad, not that we lack something */
const PEER_FAULTS: ReadonlySet<BlockErrorCode> = new Set([
  "INVALID_SIGNATURE",
  "INVALID_STATE_ROOT",
  "INCORRECT_PROPOSER",
  "STATE_TRANSITION_FAILED",
  "INVALID_EXECUTION_PAYLOAD",
  "PARENT_PAYLOAD_INVALID",
  "NOT_LATER_THAN_PARENT",
]);

export interface UnknownBlockSyncDeps {
  chain: Pick<IBeaconChain, "importBlock" | "config">;
  hasBlock(rootHex: string): boolean;
  fetchBlocksByRoot(peer: string, roots: Uint8Array[]): Promise<SignedBeaconBlock[]>;
  report(peer: string, action: PeerAction, reason: string): void;
  /** the unknown ancestors go back further than MAX_ANCESTORS: range sync's job */
  tooFarBehind?(peer: string): void;
  /**
   * Fetches the sidecars of the ancestors from peers (`peer` first). They were gossiped before we
   * knew them and will not come again: imported without, each would wait for them first.
   */
  fetchSidecars?(peer: string, ancestors: SignedBeaconBlock[]): Promise<void>;
}

/**
 * A gossip block whose parent we do not have: its ancestors are fetched by root from the
 * peer that sent it, back to a block we know, and imported in order.
 */
export class UnknownBlockSync {
  private readonly deps: UnknownBlockSyncDeps;
  private readonly pending = new Set<string>();

  constructor(deps: UnknownBlockSyncDeps) {
    this.deps = deps;
  }

  onUnknownParent(block: SignedBeaconBlock, peer: string): void {
    const root = toRootHex(this.deps.chain.config.getForkTypes(block.message.slot).BeaconBlock.hashTreeRoot(block.message));
    if (this.pending.has(root) || this.pending.size >= MAX_PENDING) return;
    this.pending.add(root);
    void this.resolve(block, peer)
      .catch((e: Error) => log.debug({root, peer, err: e.message}, "unknown parent not resolved"))
      .finally(() => this.pending.delete(root));
  }

  private async resolve(block: SignedBeaconBlock, peer: string): Promise<void> {
    const chain: SignedBeaconBlock[] = [block];
    while (!this.deps.hasBlock(toRootHex(chain[0].message.parentRoot))) {
      if (chain.length > MAX_ANCESTORS) return this.deps.tooFarBehind?.(peer);
      const parentRoot = chain[0].message.parentRoot;
      const [parent] = await this.deps.fetchBlocksByRoot(peer, [parentRoot]);
      if (!parent) {
        this.deps.report(peer, "low", "did not serve the parent of the block it sent");
        return;
      }
      const got = this.deps.chain.config.getForkTypes(parent.message.slot).BeaconBlock.hashTreeRoot(parent.message);
      if (!Buffer.from(got).equals(parentRoot)) {
        this.deps.report(peer, "high", "answered blocks by root with another block");
        return;
      }
      chain.unshift(parent);
    }
    if (chain.length > 1) await this.deps.fetchSidecars?.(peer, chain.slice(0, -1));
    for (const b of chain) {
      try {
        await this.deps.chain.importBlock(b);
      } catch (e) {
        if (e instanceof BlockError && e.code === "ALREADY_KNOWN") continue;
        // the root matched what we asked for, but the block itself is invalid (a signature is not part of the root)
        if (e instanceof BlockError && PEER_FAULTS.has(e.code)) this.deps.report(peer, "high", `served an invalid block at slot ${b.message.slot}: ${e.message}`);
        throw e;
      }
    }
    log.debug({peer, imported: chain.length}, "imported a block and its unknown ancestors");
  }
}
