import {BlockError, type BlockErrorCode} from "../../../chain/interface.ts";
import type {ParentImport} from "../../../chain/pendingChildren.ts";
import {POOL_EVENTS, PoolError, type PoolEmitter} from "../../../pools/index.ts";
import {type GossipValidationResult, ignore, reject} from "./types.ts";

/**
 * The pools' and the chain's refusals as gossip outcomes. A refusal that says the message came
 * too early or too late, or refers to a block or committee this node does not know (yet), is
 * IGNOREd; every other one names a rule the message breaks, and is REJECTed. Errors that are not
 * refusals (a failed state lookup) are the node's own problem: IGNORE.
 */

const IGNORED_POOL_REASONS = /is in the future|is too old|no committees known|no sync committee known/;
const UNKNOWN_BLOCK_ROOT = /^unknown block root (0x[0-9a-f]{64})/;

export function poolErrorOutcome(e: unknown): GossipValidationResult {
  if (!(e instanceof PoolError)) return ignore(`not validated: ${(e as Error).message}`);
  const unknownRoot = UNKNOWN_BLOCK_ROOT.exec(e.reason)?.[1];
  if (unknownRoot) return ignore(e.reason, {unknownBlockRoot: unknownRoot});
  return IGNORED_POOL_REASONS.test(e.reason) ? ignore(e.reason) : reject(e.reason);
}

const BLOCK_ERROR_OUTCOME: Record<BlockErrorCode, "IGNORE" | "REJECT"> = {
  PARENT_UNKNOWN: "IGNORE",
  ALREADY_KNOWN: "IGNORE",
  FUTURE_SLOT: "IGNORE",
  WOULD_REVERT_FINALIZED: "IGNORE",
  NOT_LATER_THAN_PARENT: "REJECT",
  INCORRECT_PROPOSER: "REJECT",
  INVALID_SIGNATURE: "REJECT",
  INVALID_STATE_ROOT: "REJECT",
  // bellatrix p2p-interface.md: blocks propagate whatever the execution engine says of their payload
  INVALID_EXECUTION_PAYLOAD: "IGNORE",
  PARENT_PAYLOAD_INVALID: "IGNORE",
  EXECUTION_ENGINE_ERROR: "IGNORE",
  // the block may be fine; its sidecars did not reach this node in time
  DATA_UNAVAILABLE: "IGNORE",
  STATE_TRANSITION_FAILED: "REJECT",
};

export function blockErrorOutcome(e: unknown, parentRootHex: string): GossipValidationResult {
  if (!(e instanceof BlockError)) return ignore(`not imported: ${(e as Error).message}`);
  if (e.code === "PARENT_UNKNOWN") return ignore(e.message, {parentUnknown: true, unknownBlockRoot: parentRootHex});
  return BLOCK_ERROR_OUTCOME[e.code] === "IGNORE" ? ignore(e.message) : reject(e.message);
}

/**
 * The pools return quietly both when they keep an operation and when they drop it as already
 * known; they emit an event only for the former. This records what they emitted, so a quiet drop
 * becomes IGNORE rather than ACCEPT.
 */
export class PoolAdmissions {
  private readonly admitted = new WeakSet<object>();

  constructor(emitter: PoolEmitter) {
    for (const topic of POOL_EVENTS) emitter.on(topic, (value: object) => this.admitted.add(value));
  }

  /** Runs the submission; true when the pool kept `value` (emitted it), false when it dropped it as known. */
  async submit(value: object, submission: Promise<void>): Promise<boolean> {
    await submission;
    return this.admitted.has(value);
  }
}

/**
 * The outcome of a block whose parent it waited for did not become known. A parent found invalid
 * makes the child invalid (REJECT: "the block's parent passes validation"); a parent not imported
 * for another reason (its data, the engine, a wait cut short) leaves the child IGNOREd, and the
 * parent to parent lookup.
 */
export function parentImportOutcome(outcome: ParentImport, parentRootHex: string): GossipValidationResult {
  const lookup = {parentUnknown: true, unknownBlockRoot: parentRootHex};
  if (outcome.kind === "dropped") return ignore(`parent ${parentRootHex} is still being imported: ${outcome.reason}`, lookup);
  if (outcome.kind === "imported") return ignore(`parent ${parentRootHex} is unknown`, lookup);
  const error = outcome.error;
  if (error instanceof BlockError && BLOCK_ERROR_OUTCOME[error.code] === "REJECT") return reject(`the parent ${parentRootHex} is invalid: ${error.message}`);
  return ignore(`parent ${parentRootHex} was not imported: ${(error as Error).message}`, lookup);
}
