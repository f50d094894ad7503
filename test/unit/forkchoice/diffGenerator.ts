import type {ProtoBlock} from "../../../src/forkchoice/index.ts";
import {SLOTS_PER_EPOCH, root} from "./fixtures.ts";
import {VALIDATORS, anchorBlock, payloadHash, type DiffEvent} from "./differential.ts";
import {epochOf, randomBlock, seededInts, type Rand} from "./randomTree.ts";

/**
 * A seeded event sequence for the differential test: a block tree with forks, blocks in their
 * own slot (timely or not), late blocks for past slots, early ones for a future slot, two blocks
 * of one slot (proposer equivocation), missed slots and epoch boundaries, attestations from the
 * current and previous epoch, attester slashings, justification and finalization that move and
 * stall with unrealized checkpoints ahead of realized ones, optimistic imports that the engine
 * later finds VALID or INVALID, and prunes.
 */
export function generateEvents(seed: number, length: number): DiffEvent[] {
  const rand = seededInts(seed);
  const anchor = anchorBlock();
  const blocks = new Map<string, ProtoBlock>([[anchor.blockRoot, anchor]]);
  const order: ProtoBlock[] = [anchor];
  const knownValid = new Set<string>([anchor.blockRoot]);
  const invalid = new Set<string>();
  const justifiedRoots = new Map<number, string>();
  let slot = 0;
  const events: DiffEvent[] = [];

  const ancestorAt = (r: string, s: number): string | null => {
    for (let b = blocks.get(r); b !== undefined; b = blocks.get(b.parentRoot)) if (b.slot <= s) return b.blockRoot;
    return null;
  };
  const recent = (count: number, keep: (b: ProtoBlock) => boolean): ProtoBlock[] => order.filter(keep).slice(-count);
  const pick = <T>(items: T[]): T | undefined => (items.length === 0 ? undefined : items[rand(items.length)]);
  const newRoot = (): string => {
    let r = root(1 + rand(2 ** 30));
    while (blocks.has(r)) r = root(1 + rand(2 ** 30));
    return r;
  };
  const markValid = (r: string) => {
    for (let b = blocks.get(r); b !== undefined && !knownValid.has(b.blockRoot); b = blocks.get(b.parentRoot)) knownValid.add(b.blockRoot);
  };

  while (events.length < length) {
    const action = rand(100);
    if (action < 18) {
      slot += rand(6) === 0 ? 2 + rand(8) : 1;
      events.push({kind: "tick", slot});
    } else if (action < 48) {
      const parent = pick(recent(6, (b) => !invalid.has(b.blockRoot)))!;
      const block = makeBlock(rand, ancestorAt, parent, slot, newRoot(), justifiedRoots);
      if (block === null) continue;
      const optimistic = rand(3) === 0;
      events.push({kind: "block", block, timely: block.slot === slot && rand(2) === 0, optimistic});
      if (block.slot > slot) continue; // an early block: rejected as from a future slot
      blocks.set(block.blockRoot, block);
      order.push(block);
      if (!optimistic) markValid(block.blockRoot);
    } else if (action < 83) {
      const target = pick(recent(8, (b) => b.slot <= slot));
      if (target === undefined) continue;
      // attestations of the current or the previous epoch, at or after the block's slot
      const earliest = Math.max(target.slot, (epochOf(slot) - 1) * SLOTS_PER_EPOCH, 0);
      if (earliest > slot) continue;
      const validators = Array.from({length: 1 + rand(6)}, () => rand(VALIDATORS));
      events.push({kind: "attest", validators: [...new Set(validators)], root: target.blockRoot, slot: earliest + rand(slot - earliest + 1)});
    } else if (action < 85) {
      events.push({kind: "slash", validators: [rand(VALIDATORS), rand(VALIDATORS)]});
    } else if (action < 90) {
      const block = pick(recent(10, (b) => !knownValid.has(b.blockRoot) && !invalid.has(b.blockRoot)));
      if (block === undefined) continue;
      events.push({kind: "valid", root: block.blockRoot});
      markValid(block.blockRoot);
    } else if (action < 94) {
      const event = invalidation(rand, blocks, order, knownValid, invalid);
      if (event !== null) events.push(event);
    } else {
      events.push({kind: "prune"});
    }
  }
  return events;
}

function makeBlock(
  rand: Rand,
  ancestorAt: (r: string, s: number) => string | null,
  parent: ProtoBlock,
  slot: number,
  blockRoot: string,
  justifiedRoots: Map<number, string>
): ProtoBlock | null {
  const kind = rand(10);
  // mostly the current slot; a late block for a past slot; now and then one for the next slot
  const blockSlot = kind < 6 ? slot : kind < 9 ? parent.slot + 1 + rand(Math.max(1, slot - parent.slot)) : slot + 1;
  if (blockSlot <= parent.slot) return null;
  const block = randomBlock(rand, ancestorAt, parent, Math.min(blockSlot, slot + 1), blockRoot, justifiedRoots);
  return {...block, executionBlockHash: payloadHash(blockRoot)};
}

/** INVALID for an optimistic block, its latest valid hash that of an ancestor above a run of optimistic blocks. */
function invalidation(rand: Rand, blocks: Map<string, ProtoBlock>, order: ProtoBlock[], knownValid: Set<string>, invalid: Set<string>): DiffEvent | null {
  const candidates = order.filter((b) => !knownValid.has(b.blockRoot) && !invalid.has(b.blockRoot)).slice(-10);
  if (candidates.length === 0) return null;
  const start = candidates[rand(candidates.length)];
  const chain: ProtoBlock[] = [start];
  let above = blocks.get(start.parentRoot)!;
  while (!knownValid.has(above.blockRoot) && rand(2) === 0) {
    chain.push(above);
    above = blocks.get(above.parentRoot)!;
  }
  const invalidNow = new Set(chain.map((b) => b.blockRoot));
  for (const b of order) if (invalidNow.has(b.parentRoot) || invalid.has(b.parentRoot)) invalidNow.add(b.blockRoot);
  for (const r of invalidNow) invalid.add(r);
  return {kind: "invalid", root: start.blockRoot, latestValidHash: above.executionBlockHash as string};
}
