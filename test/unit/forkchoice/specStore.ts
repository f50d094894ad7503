import type {CheckpointHex, ProtoBlock} from "../../../src/forkchoice/index.ts";

/**
 * A literal, slow transcription of the consensus spec's fork-choice Store (phase0
 * fork-choice.md), used as the reference the proto-array implementation is checked against.
 * Each method names the spec function it follows; nothing here is optimised.
 */
export class SpecStore {
  readonly blocks = new Map<string, ProtoBlock>();
  currentSlot: number;
  justified: CheckpointHex;
  finalized: CheckpointHex;
  private unrealizedJustified: CheckpointHex;
  private unrealizedFinalized: CheckpointHex;
  proposerBoostRoot: string | null = null;
  readonly equivocating = new Set<number>();
  readonly latestMessages = new Map<number, {epoch: number; root: string}>();
  /** attestations whose slot is not yet in the past (spec: "delay consideration") */
  private pending: Array<{validator: number; root: string; epoch: number; slot: number}> = [];
  private readonly slotsPerEpoch: number;
  private readonly boostPercent: number;
  private readonly balancesOf: (checkpoint: CheckpointHex) => number[];

  constructor(anchor: ProtoBlock, currentSlot: number, slotsPerEpoch: number, boostPercent: number, balancesOf: (c: CheckpointHex) => number[]) {
    this.blocks.set(anchor.blockRoot, anchor);
    this.currentSlot = currentSlot;
    this.justified = anchor.justifiedCheckpoint;
    this.finalized = anchor.finalizedCheckpoint;
    this.unrealizedJustified = anchor.justifiedCheckpoint;
    this.unrealizedFinalized = anchor.finalizedCheckpoint;
    this.slotsPerEpoch = slotsPerEpoch;
    this.boostPercent = boostPercent;
    this.balancesOf = balancesOf;
  }

  private epochAt(slot: number): number {
    return Math.floor(slot / this.slotsPerEpoch);
  }

  /** get_ancestor (null where the spec would fail a lookup) */
  getAncestor(root: string, slot: number): string | null {
    const block = this.blocks.get(root);
    if (!block) return null;
    if (block.slot > slot) return this.getAncestor(block.parentRoot, slot);
    return root;
  }

  /** on_tick, slot by slot (on_tick_per_slot) */
  onTick(slot: number): void {
    while (this.currentSlot < slot) {
      this.currentSlot++;
      this.proposerBoostRoot = null;
      if (this.currentSlot % this.slotsPerEpoch === 0) this.updateCheckpoints(this.unrealizedJustified, this.unrealizedFinalized);
    }
    const due = this.pending.filter((a) => this.currentSlot >= a.slot + 1).sort((a, b) => a.slot - b.slot);
    this.pending = this.pending.filter((a) => this.currentSlot < a.slot + 1);
    for (const a of due) this.updateLatestMessage(a.validator, a.root, a.epoch);
  }

  /** on_block after the state transition; false where an assert fails */
  onBlock(block: ProtoBlock, isTimely: boolean): boolean {
    const parent = this.blocks.get(block.parentRoot);
    if (!parent || this.currentSlot < block.slot || block.slot <= parent.slot) return false;
    const finalizedSlot = this.finalized.epoch * this.slotsPerEpoch;
    if (block.slot <= finalizedSlot) return false;
    if (this.getAncestor(block.parentRoot, finalizedSlot) !== this.finalized.root) return false;
    this.blocks.set(block.blockRoot, block);
    if (isTimely && block.slot === this.currentSlot && this.proposerBoostRoot === null) this.proposerBoostRoot = block.blockRoot;
    this.updateCheckpoints(block.justifiedCheckpoint, block.finalizedCheckpoint);
    // compute_pulled_up_tip
    if (block.unrealizedJustifiedCheckpoint.epoch > this.unrealizedJustified.epoch) this.unrealizedJustified = block.unrealizedJustifiedCheckpoint;
    if (block.unrealizedFinalizedCheckpoint.epoch > this.unrealizedFinalized.epoch) this.unrealizedFinalized = block.unrealizedFinalizedCheckpoint;
    if (this.epochAt(block.slot) < this.epochAt(this.currentSlot)) {
      this.updateCheckpoints(block.unrealizedJustifiedCheckpoint, block.unrealizedFinalizedCheckpoint);
    }
    return true;
  }

  /** on_attestation for one attesting index (validation assumed) */
  onAttestation(validator: number, root: string, epoch: number, slot: number): void {
    if (this.currentSlot >= slot + 1) this.updateLatestMessage(validator, root, epoch);
    else this.pending.push({validator, root, epoch, slot});
  }

  onAttesterSlashing(indices: number[]): void {
    for (const i of indices) this.equivocating.add(i);
  }

  /** get_weight */
  getWeight(root: string): number {
    const balances = this.balancesOf(this.justified);
    const slot = this.blocks.get(root)!.slot;
    let attestationScore = 0;
    for (const [i, message] of this.latestMessages) {
      if (!this.equivocating.has(i) && this.getAncestor(message.root, slot) === root) attestationScore += balances[i] ?? 0;
    }
    if (this.proposerBoostRoot === null || this.getAncestor(this.proposerBoostRoot, slot) !== root) return attestationScore;
    return attestationScore + this.proposerScore();
  }

  /** get_head */
  getHead(): string {
    const blocks = new Map<string, ProtoBlock>();
    this.filterBlockTree(this.justified.root, blocks);
    let head = this.justified.root;
    for (;;) {
      const children = [...blocks.values()].filter((b) => b.parentRoot === head).map((b) => b.blockRoot);
      if (children.length === 0) return head;
      head = children.reduce((best, r) => {
        const [wr, wb] = [this.getWeight(r), this.getWeight(best)];
        return wr > wb || (wr === wb && r > best) ? r : best;
      });
    }
  }

  /** filter_block_tree */
  private filterBlockTree(blockRoot: string, blocks: Map<string, ProtoBlock>): boolean {
    const block = this.blocks.get(blockRoot)!;
    const children = [...this.blocks.values()].filter((b) => b.parentRoot === blockRoot);
    if (children.length > 0) {
      const results = children.map((c) => this.filterBlockTree(c.blockRoot, blocks));
      if (results.some(Boolean)) {
        blocks.set(blockRoot, block);
        return true;
      }
      return false;
    }
    if (this.isViableLeaf(block)) {
      blocks.set(blockRoot, block);
      return true;
    }
    return false;
  }

  /** filter_block_tree's test for a leaf: its voting source and its checkpoint block at the finalized epoch */
  isViableLeaf(block: ProtoBlock): boolean {
    const currentEpoch = this.epochAt(this.currentSlot);
    // get_voting_source
    const votingSource = currentEpoch > this.epochAt(block.slot) ? block.unrealizedJustifiedCheckpoint : block.justifiedCheckpoint;
    const correctJustified =
      this.justified.epoch === 0 || votingSource.epoch === this.justified.epoch || votingSource.epoch + 2 >= currentEpoch;
    const correctFinalized =
      this.finalized.epoch === 0 || this.getAncestor(block.blockRoot, this.finalized.epoch * this.slotsPerEpoch) === this.finalized.root;
    return correctJustified && correctFinalized;
  }

  /** get_proposer_score under the justified balances */
  proposerScore(): number {
    const total = this.balancesOf(this.justified).reduce((sum, b) => sum + b, 0);
    return Math.floor((Math.floor(total / this.slotsPerEpoch) * this.boostPercent) / 100);
  }

  /** update_latest_messages */
  private updateLatestMessage(validator: number, root: string, epoch: number): void {
    if (this.equivocating.has(validator)) return;
    const latest = this.latestMessages.get(validator);
    if (!latest || epoch > latest.epoch) this.latestMessages.set(validator, {epoch, root});
  }

  /** update_checkpoints */
  private updateCheckpoints(justified: CheckpointHex, finalized: CheckpointHex): void {
    if (justified.epoch > this.justified.epoch) this.justified = justified;
    if (finalized.epoch > this.finalized.epoch) this.finalized = finalized;
  }
}
