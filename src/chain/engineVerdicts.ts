import type {ForkName} from "@lodestar/params";
import {fromHex, toRootHex} from "@lodestar/utils";
import type {ExecutionEngine} from "../execution/engine.ts";
import type {ForkChoice, ProtoBlock} from "../forkchoice/index.ts";
import type {ExecutionValidity} from "../forkchoice/types.ts";
import {getLogger} from "../log.ts";
import type {InvalidPayloadError} from "./verifyBlock.ts";

const log = getLogger("chain");

export interface EngineVerdictsDeps {
  engine: ExecutionEngine;
  forkChoice: () => ForkChoice;
  forkAtSlot: (slot: number) => ForkName;
  /** runs a task after every import and tick in progress (the chain's one queue) */
  serialized: (task: () => Promise<void>) => Promise<void>;
  /** recomputes the head (and finality) after fork choice changed */
  updateHead: () => Promise<unknown>;
  /** stores the blocks' new validity, so that a restart imports them with it (the hot block index) */
  storeValidity: (blocks: ProtoBlock[], validity: ExecutionValidity) => Promise<void>;
}

/**
 * What the execution engine says of payloads after their import (sync/optimistic.md): the head
 * goes to the engine in forkchoiceUpdated, whose answer validates an optimistic head or
 * invalidates it; an INVALID newPayload may invalidate optimistic ancestors too; a block imported
 * with a VALID payload validates its optimistic ancestors. Each change is stored as well as made
 * in fork choice: after a restart an optimistic block is still optimistic and an invalid one is
 * not imported again.
 */
export class EngineVerdicts {
  private readonly deps: EngineVerdictsDeps;

  constructor(deps: EngineVerdictsDeps) {
    this.deps = deps;
  }

  /** engine_forkchoiceUpdated for `head` (safe: the justified block, finalized: the finalized block), and what its answer says. */
  notifyHead(head: ProtoBlock): void {
    if (!head.executionBlockHash) return;
    const forkChoice = this.deps.forkChoice();
    const hashOf = (root: string) => forkChoice.getBlock(root)?.executionBlockHash ?? null;
    const safeHash = hashOf(forkChoice.getJustifiedCheckpoint().root);
    const finalizedHash = hashOf(forkChoice.getFinalizedCheckpoint().root);
    const zero = new Uint8Array(32);
    this.deps.engine
      .notifyForkchoiceUpdate(fromHex(head.executionBlockHash), safeHash ? fromHex(safeHash) : zero, finalizedHash ? fromHex(finalizedHash) : zero, this.deps.forkAtSlot(head.slot))
      .then((status) => {
        if (!status) return;
        // in the chain's queue, as every change of fork choice: not beside a finalization that prunes the stored blocks
        if (status.status === "VALID") return this.deps.serialized(() => this.deps.storeValidity(this.deps.forkChoice().onPayloadValid(head.blockRoot), "valid"));
        if (status.status === "INVALID" || status.status === "INVALID_BLOCK_HASH") {
          const latestValidHash = status.status === "INVALID" ? status.latestValidHash : null;
          return this.deps.serialized(() => this.invalidate(head.blockRoot, latestValidHash));
        }
      })
      // an unreachable engine is logged by the engine client
      .catch((e: Error) => log.debug({err: e.message}, "forkchoiceUpdated failed"));
  }

  /** A block was imported (or re-imported at start-up) with a VALID payload: so are its ancestors' (sync/optimistic.md). Runs inside the chain's queue. */
  async onValidImport(block: ProtoBlock): Promise<void> {
    const forkChoice = this.deps.forkChoice();
    if (forkChoice.getValidity(block.parentRoot) !== "optimistic") return;
    await this.deps.storeValidity(forkChoice.onPayloadValid(block.parentRoot), "valid");
  }

  /**
   * A new block's payload was INVALID (the block itself is refused by the caller): when the
   * engine's latest valid hash is an ancestor older than the parent, the optimistic blocks
   * after it are invalid too. Runs inside the chain's queue.
   */
  async onInvalidNewPayload(parent: ProtoBlock, error: InvalidPayloadError): Promise<void> {
    if (!error.latestValidHash) return;
    const latestValid = toRootHex(error.latestValidHash);
    if (latestValid === parent.executionBlockHash) return;
    const isAncestor = [...this.deps.forkChoice().iterateAncestors(parent.blockRoot)].some((b) => b.executionBlockHash === latestValid);
    if (isAncestor) await this.invalidate(parent.blockRoot, error.latestValidHash);
  }

  /** `rootHex`'s payload is invalid: out of fork choice with its descendants (and ancestors newer than latestValidHash). */
  private async invalidate(rootHex: string, latestValidHash: Uint8Array | null): Promise<void> {
    const latestValid = latestValidHash ? toRootHex(latestValidHash) : null;
    const invalidated = this.deps.forkChoice().onPayloadInvalid(rootHex, latestValid);
    if (invalidated.length === 0) return;
    await this.deps.storeValidity(invalidated, "invalid");
    log.warn({root: rootHex, latestValidHash: latestValid, blocks: invalidated.map((b) => b.blockRoot)}, "execution engine says INVALID: blocks invalidated");
    await this.deps.updateHead();
  }
}
