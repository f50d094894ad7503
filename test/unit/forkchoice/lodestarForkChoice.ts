import type {CheckpointHex, ProtoBlock} from "../../../src/forkchoice/index.ts";
// Lodestar 1.5.1's whole ForkChoice class (its Store: justified, best justified, unrealized and
// finalized checkpoints, proposer boost, queued attestations, equivocations), loaded file by file
// like the proto-array in lodestarOracle.ts. It reads SAFE_SLOTS_TO_UPDATE_JUSTIFIED from
// @lodestar/params 1.5.1, which package.json's `overrides` nest under node_modules/lodestar-fork-choice
// (the node's own @lodestar/params 1.46 no longer has it).
import {ForkChoice, computeProposerBoostScoreFromBalances} from "../../../node_modules/lodestar-fork-choice/lib/forkChoice/forkChoice.js";
import {ForkChoiceError} from "../../../node_modules/lodestar-fork-choice/lib/forkChoice/errors.js";
import {ForkChoiceStore} from "../../../node_modules/lodestar-fork-choice/lib/forkChoice/store.js";
import {ExecutionStatus, HEX_ZERO_HASH} from "../../../node_modules/lodestar-fork-choice/lib/protoArray/interface.js";
import type {ProtoNode} from "../../../node_modules/lodestar-fork-choice/lib/protoArray/interface.js";
import {ProtoArray} from "../../../node_modules/lodestar-fork-choice/lib/protoArray/protoArray.js";
import {SAFE_SLOTS_TO_UPDATE_JUSTIFIED, SLOTS_PER_EPOCH} from "../../../node_modules/lodestar-fork-choice/node_modules/@lodestar/params/lib/index.js";

export {SAFE_SLOTS_TO_UPDATE_JUSTIFIED};

const bytes = (hex: string): Uint8Array => Uint8Array.from(Buffer.from(hex.slice(2), "hex"));

interface LodestarCheckpoint {
  epoch: number;
  rootHex: string;
}

/** The checkpoint as ours writes it. */
export function checkpointOf(c: LodestarCheckpoint): CheckpointHex {
  return {epoch: c.epoch, root: c.rootHex};
}

const toCheckpoint = (c: CheckpointHex) => ({epoch: c.epoch, root: bytes(c.root)});

/**
 * What Lodestar's onBlock reads of the block's post-state, taken from our ProtoBlock: its
 * checkpoints, the block at the start of its epoch (state.block_roots, the chain's history: asked
 * of `ancestorAt`), a capella payload header (so the block's
 * payload counts), and for computeUnrealizedCheckpoints (@lodestar/state-transition, the state
 * transition's part, not the fork choice's) a copy whose pulled-up checkpoints are the block's
 * unrealized ones: no target balance reaches two thirds, so the copy keeps them as they are.
 */
function postState(block: ProtoBlock, ancestorAt: (root: string, slot: number) => string): object {
  const unrealized = {
    slot: block.slot,
    previousJustifiedCheckpoint: toCheckpoint(block.unrealizedJustifiedCheckpoint),
    get currentJustifiedCheckpoint() {
      return toCheckpoint(block.unrealizedJustifiedCheckpoint);
    },
    set currentJustifiedCheckpoint(_ignored: unknown) {},
    get finalizedCheckpoint() {
      return toCheckpoint(block.unrealizedFinalizedCheckpoint);
    },
    set finalizedCheckpoint(_ignored: unknown) {},
    justificationBits: {toBoolArray: () => [false, false, false, false]},
  };
  return {
    slot: block.slot,
    currentJustifiedCheckpoint: toCheckpoint(block.justifiedCheckpoint),
    finalizedCheckpoint: toCheckpoint(block.finalizedCheckpoint),
    blockRoots: {get: () => bytes(ancestorAt(block.parentRoot, Math.floor(block.slot / SLOTS_PER_EPOCH) * SLOTS_PER_EPOCH))},
    latestExecutionPayloadHeader: {withdrawalsRoot: new Uint8Array(32)},
    config: {getForkSeq: () => 3 /* capella */},
    epochCtx: {epoch: 2, totalActiveBalanceIncrements: Infinity, previousTargetUnslashedBalanceIncrements: 0, currentTargetUnslashedBalanceIncrements: 0},
    clone: () => unrealized,
  };
}

/**
 * One side of the differential test: Lodestar 1.5.1's ForkChoice, fed the same events as ours
 * (blocks with their post-states' checkpoints, attestations, slashings, the engine's verdicts,
 * ticks, prunes) and keeping its own Store. Lodestar 1.5.1 follows fork-choice.md as of v1.2 on
 * every fork it knows (phase0 to capella); the checkpoint rules fork-choice.md changed since are
 * named in `checkpointRules` of the differential.
 */
export class LodestarForkChoice {
  readonly fc: ForkChoice;
  readonly protoArray: ProtoArray;
  private readonly store: ForkChoiceStore;
  /** the times the Store's justified checkpoint was set with a new finalized checkpoint (fork-choice.md v1.2) */
  finalizedResets = 0;
  private finalizing = false;
  private readonly boostPercent: number;
  private readonly secondsPerSlot: number;

  constructor(anchor: ProtoBlock, boostPercent: number, secondsPerSlot: number, balancesOf: (c: CheckpointHex) => number[]) {
    if (SLOTS_PER_EPOCH !== 8) throw new Error(`Lodestar 1.5.1's preset has ${SLOTS_PER_EPOCH} slots per epoch: run with LODESTAR_PRESET=minimal`);
    this.boostPercent = boostPercent;
    this.secondsPerSlot = secondsPerSlot;
    const balances = (c: LodestarCheckpoint) => Uint16Array.from(balancesOf(checkpointOf(c)));
    const checkpoint = {...toCheckpoint(anchor.justifiedCheckpoint), rootHex: anchor.justifiedCheckpoint.root};
    // the Store's events: on a new finalized checkpoint, Lodestar sets the justified one right after
    const events = {
      onJustified: () => {
        if (this.finalizing) this.finalizedResets++;
        this.finalizing = false;
      },
      onFinalized: () => {
        this.finalizing = true;
      },
    };
    this.store = new ForkChoiceStore(0, checkpoint, checkpoint, balances(checkpoint), balances, events);
    const protoArray = (this.protoArray = ProtoArray.initialize(
      {
        slot: anchor.slot,
        blockRoot: anchor.blockRoot,
        parentRoot: anchor.parentRoot,
        stateRoot: anchor.stateRoot,
        justifiedEpoch: anchor.justifiedCheckpoint.epoch,
        justifiedRoot: anchor.justifiedCheckpoint.root,
        finalizedEpoch: anchor.finalizedCheckpoint.epoch,
        finalizedRoot: anchor.finalizedCheckpoint.root,
        unrealizedJustifiedEpoch: anchor.justifiedCheckpoint.epoch,
        unrealizedJustifiedRoot: anchor.justifiedCheckpoint.root,
        unrealizedFinalizedEpoch: anchor.finalizedCheckpoint.epoch,
        unrealizedFinalizedRoot: anchor.finalizedCheckpoint.root,
        executionPayloadBlockHash: anchor.executionBlockHash as string,
        executionStatus: ExecutionStatus.Valid,
      },
      0
    ));
    // the block's root is ours: hash_tree_root is the config's, asked for by slot
    const config = {
      SECONDS_PER_SLOT: secondsPerSlot,
      PROPOSER_SCORE_BOOST: boostPercent,
      getForkTypes: () => ({BeaconBlock: {hashTreeRoot: (b: {root: Uint8Array}) => b.root}}),
    };
    this.fc = new ForkChoice(config as never, this.store, protoArray, {proposerBoostEnabled: true, computeUnrealized: true});
  }

  onTick(slot: number): void {
    this.fc.updateTime(slot);
  }

  /** Whether Lodestar took the block (a ForkChoiceError where it did not). */
  onBlock(block: ProtoBlock, isTimely: boolean, optimistic: boolean): boolean {
    const beaconBlock = {
      slot: block.slot,
      root: bytes(block.blockRoot),
      parentRoot: bytes(block.parentRoot),
      stateRoot: bytes(block.stateRoot),
      body: {executionPayload: {blockHash: bytes(block.executionBlockHash as string)}},
    };
    const status = optimistic ? ExecutionStatus.Syncing : ExecutionStatus.Valid;
    try {
      const state = postState(block, (root, slot) => this.fc.getAncestor(root, slot));
      this.fc.onBlock(beaconBlock as never, state as never, isTimely ? 0 : this.secondsPerSlot, this.store.currentSlot, status);
      return true;
    } catch (e) {
      if (e instanceof ForkChoiceError) return false;
      throw e;
    }
  }

  /**
   * One attestation of `validators` to `root` at `slot`, its target the checkpoint block of the
   * slot's epoch; what Lodestar's validate_on_attestation threw where it refused it.
   */
  onAttestation(validators: number[], root: string, slot: number, targetRoot: string): string | null {
    if (validators.length === 0) return null;
    const epoch = Math.floor(slot / SLOTS_PER_EPOCH);
    const data = {slot, index: 0, beaconBlockRoot: bytes(root), source: {epoch: 0, root: new Uint8Array(32)}, target: {epoch, root: bytes(targetRoot)}};
    try {
      this.fc.onAttestation({attestingIndices: validators, data, signature: new Uint8Array(96)} as never, `${slot}/${root}/${targetRoot}`);
      return null;
    } catch (e) {
      if (e instanceof ForkChoiceError) return `Lodestar refused it: ${JSON.stringify(e.type)}`;
      throw e;
    }
  }

  onAttesterSlashing(validators: number[]): void {
    const attestation = {attestingIndices: [...validators].sort((a, b) => a - b)};
    this.fc.onAttesterSlashing({attestation1: attestation, attestation2: attestation} as never);
  }

  onPayloadValid(root: string): void {
    const hash = this.protoArray.getNode(root)?.executionPayloadBlockHash;
    if (hash) this.fc.validateLatestHash({executionStatus: ExecutionStatus.Valid, latestValidExecHash: hash});
  }

  onPayloadInvalid(root: string, latestValidHash: string): void {
    this.fc.validateLatestHash({executionStatus: ExecutionStatus.Invalid, invalidateFromBlockHash: root, latestValidExecHash: latestValidHash});
  }

  prune(): void {
    this.fc.prune(this.store.finalizedCheckpoint.rootHex);
  }

  /** Lodestar's head, or what it threw. */
  updateHead(): string {
    try {
      return this.fc.updateHead().blockRoot;
    } catch (e) {
      return `(Lodestar threw ${(e as Error).message})`;
    }
  }

  get justified(): CheckpointHex {
    return checkpointOf(this.store.justified.checkpoint);
  }

  get bestJustified(): CheckpointHex {
    return checkpointOf(this.store.bestJustified.checkpoint);
  }

  get finalized(): CheckpointHex {
    return checkpointOf(this.store.finalizedCheckpoint);
  }

  get currentSlot(): number {
    return this.store.currentSlot;
  }

  /** the block that gets the proposer boost, null for none */
  get proposerBoostRoot(): string | null {
    const boost = this.fc.getProposerBoostRoot();
    return boost === HEX_ZERO_HASH ? null : boost;
  }

  /** Lodestar's proposer score: fork-choice.md v1.2's, a committee of active validators at their average balance */
  proposerScore(): number {
    return computeProposerBoostScoreFromBalances(this.store.justified.balances, {slotsPerEpoch: SLOTS_PER_EPOCH, proposerScoreBoost: this.boostPercent});
  }

  node(root: string): ProtoNode | undefined {
    return this.protoArray.getNode(root);
  }

  get nodes(): readonly ProtoNode[] {
    return this.protoArray.nodes;
  }
}
