import {ForkChoice, ForkChoiceError, type CheckpointHex, type ProtoBlock} from "../../../src/forkchoice/index.ts";
import {logManager} from "../../../src/log.ts";
import {OPTS, SLOTS_PER_EPOCH, genesisBlock} from "./fixtures.ts";
import {LodestarForkChoice, SAFE_SLOTS_TO_UPDATE_JUSTIFIED} from "./lodestarForkChoice.ts";
import {LodestarOracle} from "./lodestarOracle.ts";
import {balancesOf, epochOf} from "./randomTree.ts";

/**
 * Our ForkChoice against Lodestar 1.5.1's proto-array (driven by the spec transcription's Store,
 * lodestarOracle.ts) and against Lodestar 1.5.1's whole ForkChoice class, with a Store of its own
 * (lodestarForkChoice.ts), on one event sequence, compared after every event. Events that the
 * node's callers would never pass on are skipped by all sides alike (see `gate`), so any
 * subsequence of a sequence is a valid sequence: that is what lets `shrink` drop events freely.
 */

export const VALIDATORS = 24;

// thousands of invalidations, each one warned about: not worth reading here
const directive = logManager().current();
logManager().apply({...directive, disabled: [...directive.disabled, "forkchoice"], required: directive.required.filter((t) => t !== "forkchoice")});

export type DiffEvent =
  | {kind: "tick"; slot: number}
  | {kind: "block"; block: ProtoBlock; timely: boolean; optimistic: boolean}
  /** one attestation per validator, target epoch the slot's epoch */
  | {kind: "attest"; validators: number[]; root: string; slot: number}
  | {kind: "slash"; validators: number[]}
  | {kind: "valid"; root: string}
  | {kind: "invalid"; root: string; latestValidHash: string}
  | {kind: "prune"};

export interface Disagreement {
  /** index of the event after which the two differ */
  step: number;
  what: "accepted" | "justified" | "finalized" | "head" | "weight" | "validity" | "missing node" | "error" | FullWhat;
  detail: string;
}

export interface ReplayResult {
  disagreement: Disagreement | null;
  /** events applied (not skipped) */
  applied: number;
  /** comparisons of the head made (the head filters of both versions agreed on every node) */
  headsCompared: number;
  /** comparisons skipped because the spec's filter_block_tree and Lodestar's differ (see the test) */
  headsNotComparable: number;
  justifiedEpochs: number;
  finalizedEpochs: number;
  invalidated: number;
  /** head disagreements of a known cause, by cause */
  explained: Partial<Record<ExplainedHead, number>>;
  /** Lodestar's whole ForkChoice: the steps its checkpoints were compared on (all of them) */
  fullCheckpointsCompared: number;
  /** and its head and every node's weight, where the rules of its fork-choice.md and v1.6.1 agree */
  fullHeadsCompared: number;
  /** its head disagreements of a known cause, by cause */
  fullExplained: Partial<Record<ExplainedHead, number>>;
  /** the times its justified checkpoint fell behind ours by a rule v1.6.1 dropped, by rule */
  checkpointRules: Partial<Record<CheckpointRule, number>>;
}

export const balances = (checkpoint: CheckpointHex): number[] => balancesOf(checkpoint, VALIDATORS);

/** A post-merge anchor: every block carries an execution block hash, derived from its root. */
export function anchorBlock(): ProtoBlock {
  const genesis = genesisBlock();
  return {...genesis, executionBlockHash: payloadHash(genesis.blockRoot)};
}

export function payloadHash(blockRoot: string): string {
  return "0xee" + blockRoot.slice(4);
}

function sameCheckpoint(a: CheckpointHex, b: CheckpointHex): boolean {
  return a.epoch === b.epoch && a.root === b.root;
}

export class Sides {
  readonly ours: ForkChoice;
  readonly oracle: LodestarOracle;
  /** Lodestar 1.5.1's ForkChoice, with a Store of its own */
  readonly full: LodestarForkChoice;
  /** the v1.2 rule that holds Lodestar's justified checkpoint behind ours, while it does */
  private heldBack: CheckpointRule | null = null;
  /** Lodestar's finalizedResets at the last comparison */
  private finalizedResets = 0;
  constructor() {
    const anchor = anchorBlock();
    this.ours = new ForkChoice({anchor, currentSlot: 0, opts: OPTS, getJustifiedBalances: balances});
    this.oracle = new LodestarOracle(anchor, 0, SLOTS_PER_EPOCH, OPTS.proposerScoreBoostPercent, balances);
    this.full = new LodestarForkChoice(anchor, OPTS.proposerScoreBoostPercent, OPTS.secondsPerSlot, balances);
  }

  /** spec get_checkpoint_block: the attestation's target */
  targetOf(event: {root: string; slot: number}): string | null {
    return this.ours.getAncestor(event.root, epochOf(event.slot) * SLOTS_PER_EPOCH);
  }

  /**
   * Whether the node's callers would pass this event on: attestations only to blocks the node
   * keeps (gossip and block import check it), no block on an invalid parent and no VALID for
   * an invalid block (an engine does not say so), INVALID only with a latest valid hash of an
   * ancestor and over no block found valid (VALID -> INVALID is out of the spec: sync/optimistic.md
   * "Transitioning from VALID -> INVALIDATED or INVALIDATED -> VALID"), a prune only when the
   * justified block descends from the finalized one.
   */
  gate(event: DiffEvent): boolean {
    const {ours} = this;
    switch (event.kind) {
      case "block":
        return ours.getValidity(event.block.parentRoot) !== "invalid";
      case "attest": {
        // validate_on_attestation: "assert target.epoch in [current_epoch, previous_epoch]", the
        // target and the block known (a shrunk sequence may lack the ticks or blocks that made it so)
        const currentEpoch = epochOf(this.oracle.store.currentSlot);
        const epoch = epochOf(event.slot);
        const target = this.targetOf(event);
        return ours.hasBlock(event.root) && epoch <= currentEpoch && epoch + 1 >= currentEpoch && target !== null && ours.hasBlock(target);
      }
      case "valid": {
        const validity = ours.getValidity(event.root);
        return validity !== null && validity !== "invalid";
      }
      case "invalid": {
        if (!ours.hasBlock(event.root)) return false;
        for (const block of ours.iterateAncestors(event.root)) {
          if (block.executionBlockHash === event.latestValidHash) return block.blockRoot !== event.root;
          if (ours.getValidity(block.blockRoot) === "valid") return false;
        }
        return false;
      }
      case "prune": {
        // a checkpoint justified beside the finalized one takes a third of the stake slashable: out of scope
        const finalized = ours.getFinalizedCheckpoint();
        for (const block of this.oracle.store.blocks.values()) {
          for (const justified of [block.justifiedCheckpoint, block.unrealizedJustifiedCheckpoint]) {
            if (justified.epoch > finalized.epoch && !ours.isDescendant(finalized.root, justified.root)) return false;
          }
        }
        return ours.isDescendant(finalized.root, ours.getJustifiedCheckpoint().root);
      }
      default:
        return true;
    }
  }

  /** Applies the event to both sides; a disagreement on a block's acceptance is returned. */
  apply(event: DiffEvent): string | null {
    const {ours, oracle, full} = this;
    switch (event.kind) {
      case "tick":
        ours.onTick(event.slot);
        oracle.store.onTick(event.slot);
        full.onTick(event.slot);
        return null;
      case "block": {
        let oursAccepted = true;
        try {
          ours.onBlock(event.block, {isTimely: event.timely, optimistic: event.optimistic});
        } catch (e) {
          if (!(e instanceof ForkChoiceError)) throw e;
          oursAccepted = false;
        }
        // the chain marks a block's ancestors valid once the engine finds its payload VALID (src/chain/engineVerdicts.ts)
        if (oursAccepted && !event.optimistic) ours.onPayloadValid(event.block.parentRoot);
        const theirsAccepted = oracle.onBlock(event.block, event.timely, event.optimistic);
        const fullAccepted = full.onBlock(event.block, event.timely, event.optimistic);
        const said = (accepted: boolean) => (accepted ? "accepted" : "rejected");
        if (oursAccepted === theirsAccepted && oursAccepted === fullAccepted) return null;
        return `ours ${said(oursAccepted)} it, the spec store ${said(theirsAccepted)} it, Lodestar's ForkChoice ${said(fullAccepted)} it`;
      }
      case "attest":
        for (const validator of event.validators) {
          ours.onAttestation(validator, event.root, epochOf(event.slot), event.slot);
          oracle.store.onAttestation(validator, event.root, epochOf(event.slot), event.slot);
        }
        return full.onAttestation(event.validators, event.root, event.slot, this.targetOf(event)!);
      case "slash":
        ours.onAttesterSlashing(event.validators);
        oracle.store.onAttesterSlashing(event.validators);
        full.onAttesterSlashing(event.validators);
        return null;
      case "valid":
        ours.onPayloadValid(event.root);
        oracle.onPayloadValid(event.root);
        full.onPayloadValid(event.root);
        return null;
      case "invalid":
        ours.onPayloadInvalid(event.root, event.latestValidHash);
        oracle.onPayloadInvalid(event.root, event.latestValidHash);
        full.onPayloadInvalid(event.root, event.latestValidHash);
        return null;
      case "prune":
        ours.prune();
        oracle.prune();
        full.prune();
        return null;
    }
  }

  /**
   * lodestar-inner-block: Lodestar's proto-array takes a block whose own checkpoints pass its
   * filter as a head candidate although it has children (nodeLeadsToViableHead); the spec's
   * filter_block_tree judges leaves only, a block with children is kept only through a viable one.
   * lodestar-no-viable-head: no leaf under the justified block is viable; the spec's get_head
   * returns the justified block, Lodestar's findHead throws (INVALID_BEST_NODE) as its best-child
   * links still point at a block its filter rejects.
   * lodestar-invalid-justified: the justified block's payload was found INVALID; Lodestar stops
   * choosing a head, ours keeps the justified block (sync/optimistic.md, "Re-Orgs": "If the
   * justified checkpoint transitions from NOT_VALIDATED -> INVALIDATED, a consensus engine MAY
   * choose to alert the user and force the application to exit").
   */
  /**
   * No leaf under the justified block passes filter_block_tree (a block whose children are all
   * invalid counts as a leaf): the spec's get_head then returns the justified block.
   */
  private noViableLeaf(): boolean {
    const {ours, oracle} = this;
    const justified = ours.getJustifiedCheckpoint().root;
    const live = ours.getAllNodes().filter((n) => n.validity !== "invalid" && ours.isDescendant(justified, n.blockRoot));
    const leaves = live.filter((n) => !live.some((c) => c.parentRoot === n.blockRoot));
    return ours.getHead().blockRoot === justified && !leaves.some((leaf) => oracle.store.isViableLeaf(oracle.store.blocks.get(leaf.blockRoot)!));
  }

  private explainHead(theirsHead: string): ExplainedHead | null {
    const {ours, oracle} = this;
    if (theirsHead.includes("INVALID_BEST_NODE") && this.noViableLeaf()) return "lodestar-no-viable-head";
    if (theirsHead.includes("INVALID_JUSTIFIED_EXECUTION_STATUS") && ours.getValidity(ours.getJustifiedCheckpoint().root) === "invalid") {
      return "lodestar-invalid-justified";
    }
    const hasLiveChild = ours.getAllNodes().some((n) => n.parentRoot === theirsHead && n.validity !== "invalid");
    return hasLiveChild ? "lodestar-inner-block" : null;
  }

  compare(step: number, result: ReplayResult, explain = true): Disagreement | null {
    const {ours, oracle} = this;
    const oursHead = ours.updateHead().blockRoot;
    let theirsHead: string;
    try {
      theirsHead = oracle.updateHead();
    } catch (e) {
      theirsHead = `(Lodestar threw ${(e as Error).message})`;
    }
    const justified = ours.getJustifiedCheckpoint();
    const finalized = ours.getFinalizedCheckpoint();
    if (!sameCheckpoint(justified, oracle.store.justified)) {
      return {step, what: "justified", detail: `ours ${JSON.stringify(justified)}, spec store ${JSON.stringify(oracle.store.justified)}`};
    }
    if (!sameCheckpoint(finalized, oracle.store.finalized)) {
      return {step, what: "finalized", detail: `ours ${JSON.stringify(finalized)}, spec store ${JSON.stringify(oracle.store.finalized)}`};
    }
    for (const node of ours.getAllNodes()) {
      const theirs = oracle.node(node.blockRoot);
      if (theirs === undefined) return {step, what: "missing node", detail: `${node.blockRoot} is not in Lodestar's proto-array`};
      if (theirs.weight !== node.weight) return {step, what: "weight", detail: `${node.blockRoot}: ours ${node.weight}, Lodestar ${theirs.weight}`};
      const theirValidity = oracle.validity(node.blockRoot);
      if (theirValidity !== node.validity) return {step, what: "validity", detail: `${node.blockRoot}: ours ${node.validity}, Lodestar ${theirValidity}`};
    }
    if (oracle.filtersAgree()) {
      result.headsCompared++;
      if (oursHead !== theirsHead) {
        const explained = explain ? this.explainHead(theirsHead) : null;
        if (explained === null) return {step, what: "head", detail: `ours ${oursHead}, Lodestar ${theirsHead}`};
        result.explained[explained] = (result.explained[explained] ?? 0) + 1;
      }
    } else {
      result.headsNotComparable++;
    }
    result.justifiedEpochs = Math.max(result.justifiedEpochs, justified.epoch);
    result.finalizedEpochs = Math.max(result.finalizedEpochs, finalized.epoch);
    return this.compareFull(step, result, explain, oursHead);
  }

  /**
   * Lodestar's ForkChoice against ours: the finalized checkpoint always; the justified one but
   * where a rule of fork-choice.md v1.2 that v1.6.1 dropped holds Lodestar's back (`CheckpointRule`:
   * then Lodestar keeps ours as its best justified checkpoint, for the next epoch); the head and
   * every node's weight where both versions' rules give the same answer: the same checkpoints, the
   * same proposer boost (v1.2 boosted the last timely block and scored it by an average balance),
   * the same head filter.
   */
  private compareFull(step: number, result: ReplayResult, explain: boolean, oursHead: string): Disagreement | null {
    const {ours, oracle, full} = this;
    const theirsHead = full.updateHead();
    const justified = ours.getJustifiedCheckpoint();
    const detail = (o: CheckpointHex, t: CheckpointHex) => `ours ${JSON.stringify(o)}, Lodestar's ForkChoice ${JSON.stringify(t)}`;
    if (!sameCheckpoint(ours.getFinalizedCheckpoint(), full.finalized)) {
      return {step, what: "lodestar finalized", detail: detail(ours.getFinalizedCheckpoint(), full.finalized)};
    }
    result.fullCheckpointsCompared++;
    const resetNow = full.finalizedResets !== this.finalizedResets;
    this.finalizedResets = full.finalizedResets;
    if (!sameCheckpoint(justified, full.justified)) {
      const heldBack = full.justified.epoch < justified.epoch && sameCheckpoint(full.bestJustified, justified);
      if (!explain || !heldBack) return {step, what: "lodestar justified", detail: `${detail(justified, full.justified)} (its best justified ${JSON.stringify(full.bestJustified)})`};
      if (this.heldBack === null) {
        // where it starts: Lodestar's justified checkpoint set with a new finalized one during the
        // event (a later update in the same event may raise it again, not to ours), or one refused by
        // should_update_justified_checkpoint, which refuses none in an epoch's first safe slots
        const cause = resetNow ? "v1.2-finalized-resets-justified" : "v1.2-should-update-justified";
        if (cause === "v1.2-should-update-justified" && full.currentSlot % SLOTS_PER_EPOCH < SAFE_SLOTS_TO_UPDATE_JUSTIFIED) {
          return {step, what: "lodestar justified", detail: `${detail(justified, full.justified)} in a safe slot`};
        }
        this.heldBack = cause;
        result.checkpointRules[cause] = (result.checkpointRules[cause] ?? 0) + 1;
      }
      return null;
    }
    this.heldBack = null;
    const boost = oracle.store.proposerBoostRoot;
    const sameBoost = boost === full.proposerBoostRoot && (boost === null || !ours.hasBlock(boost) || oracle.store.proposerScore() === full.proposerScore());
    if (!sameBoost || !oracle.filtersAgree(full.protoArray)) return null;
    result.fullHeadsCompared++;
    for (const node of ours.getAllNodes()) {
      const theirs = full.node(node.blockRoot);
      if (theirs === undefined) return {step, what: "lodestar weight", detail: `${node.blockRoot} is not in Lodestar's ForkChoice`};
      if (theirs.weight !== node.weight) return {step, what: "lodestar weight", detail: `${node.blockRoot}: ours ${node.weight}, Lodestar's ForkChoice ${theirs.weight}`};
    }
    if (oursHead !== theirsHead) {
      const explained = explain ? this.explainHead(theirsHead) : null;
      if (explained === null) return {step, what: "lodestar head", detail: `ours ${oursHead}, Lodestar's ForkChoice ${theirsHead}`};
      result.fullExplained[explained] = (result.fullExplained[explained] ?? 0) + 1;
    }
    return null;
  }
}

/** Lodestar's ForkChoice against ours: what differed */
export type FullWhat = "lodestar justified" | "lodestar finalized" | "lodestar head" | "lodestar weight";

/**
 * Rules of fork-choice.md v1.2 (Lodestar 1.5.1's) that v1.6.1 dropped, each holding the store's
 * justified checkpoint behind ours until the next epoch (the test shows each on a minimal sequence):
 * v1.2-should-update-justified: should_update_justified_checkpoint takes a new justified checkpoint
 * after the first SAFE_SLOTS_TO_UPDATE_JUSTIFIED slots of an epoch only if it descends from the
 * store's; v1.2-finalized-resets-justified: a new finalized checkpoint brings the justified one of
 * the same state with it, even an older one.
 */
export type CheckpointRule = "v1.2-should-update-justified" | "v1.2-finalized-resets-justified";

/**
 * Head disagreements whose cause is known and where the spec sides with us (see the test, which
 * shows each on a minimal sequence with the spec's text).
 */
export type ExplainedHead = "lodestar-inner-block" | "lodestar-invalid-justified" | "lodestar-no-viable-head";

/**
 * Runs the events on both sides, comparing after each; stops at the first disagreement.
 * `explain: false` reports the head disagreements of known cause too.
 */
export function replay(events: readonly DiffEvent[], {explain = true, makeSides = () => new Sides()} = {}): ReplayResult & {sides: Sides} {
  const result: ReplayResult = {
    ...{disagreement: null, applied: 0, headsCompared: 0, headsNotComparable: 0, justifiedEpochs: 0, finalizedEpochs: 0, invalidated: 0},
    ...{explained: {}, fullExplained: {}, fullCheckpointsCompared: 0, fullHeadsCompared: 0, checkpointRules: {}},
  };
  const sides = makeSides();
  const done = () => ({...result, sides});
  for (const [step, event] of events.entries()) {
    if (!sides.gate(event)) continue;
    result.applied++;
    try {
      const rejected = sides.apply(event);
      if (rejected !== null) {
        result.disagreement = {step, what: "accepted", detail: rejected};
        return done();
      }
      if (event.kind === "invalid") result.invalidated++;
      result.disagreement = sides.compare(step, result, explain);
    } catch (e) {
      result.disagreement = {step, what: "error", detail: (e as Error).stack ?? String(e)};
    }
    if (result.disagreement !== null) return done();
  }
  return done();
}
