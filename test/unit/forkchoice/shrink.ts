import type {CheckpointHex} from "../../../src/forkchoice/index.ts";
import {Sides, anchorBlock, replay, type DiffEvent, type Disagreement} from "./differential.ts";

/** A disagreement of the differential test made small and readable: delta debugging, then one event a line. */

/**
 * The shortest sequence found that still shows a disagreement of the same kind: events after it
 * dropped, then chunks of halving size removed while the disagreement stays (delta debugging).
 */
export function shrink(events: readonly DiffEvent[], makeSides = () => new Sides()): {events: DiffEvent[]; disagreement: Disagreement} {
  const first = replay(events, {makeSides}).disagreement;
  if (first === null) throw new Error("shrink: the sequence shows no disagreement");
  const sameKind = (candidate: DiffEvent[]): Disagreement | null => {
    const d = replay(candidate, {makeSides}).disagreement;
    return d !== null && d.what === first.what ? d : null;
  };
  let current = events.slice(0, first.step + 1);
  let found = first;
  for (let chunk = Math.max(1, current.length >> 1); chunk >= 1; chunk = chunk === 1 ? 0 : Math.max(1, chunk >> 1)) {
    for (let start = current.length - chunk; start >= 0; start -= chunk) {
      const candidate = [...current.slice(0, start), ...current.slice(start + chunk)];
      const d = sameKind(candidate);
      if (d !== null) {
        current = candidate.slice(0, d.step + 1);
        found = d;
        start = Math.min(start, current.length);
      }
    }
  }
  return {events: current, disagreement: found};
}

/** The events one per line, roots named b0, b1, ... in order of appearance. */
export function describeEvents(events: readonly DiffEvent[], disagreement?: Disagreement): string {
  const names = new Map<string, string>([[anchorBlock().blockRoot, "b0"]]);
  const name = (r: string) => {
    if (!names.has(r)) names.set(r, `b${names.size}`);
    return names.get(r)!;
  };
  const hashName = (h: string) => `hash(${name("0x00" + h.slice(4))})`;
  const checkpoint = (c: CheckpointHex) => `${c.epoch}/${name(c.root)}`;
  const lines = events.map((e) => {
    switch (e.kind) {
      case "tick":
        return `tick to slot ${e.slot}`;
      case "block": {
        const b = e.block;
        return (
          `block ${name(b.blockRoot)} slot ${b.slot} on ${name(b.parentRoot)}: justified ${checkpoint(b.justifiedCheckpoint)} ` +
          `finalized ${checkpoint(b.finalizedCheckpoint)} unrealized ${checkpoint(b.unrealizedJustifiedCheckpoint)} ${checkpoint(b.unrealizedFinalizedCheckpoint)}` +
          `${e.timely ? " timely" : ""}${e.optimistic ? " optimistic" : ""}`
        );
      }
      case "attest":
        return `validators ${e.validators.join(",")} attest to ${name(e.root)} at slot ${e.slot}`;
      case "slash":
        return `attester slashing of ${e.validators.join(",")}`;
      case "valid":
        return `engine: ${name(e.root)} VALID`;
      case "invalid":
        return `engine: ${name(e.root)} INVALID, latest valid ${hashName(e.latestValidHash)}`;
      case "prune":
        return "prune";
    }
  });
  let text = lines.map((l, i) => `${String(i).padStart(3)}  ${l}`).join("\n");
  if (disagreement) {
    const detail = disagreement.detail.replace(/0x[0-9a-f]{64}/g, (r) => name(r));
    text += `\nafter event ${disagreement.step}: ${disagreement.what} differs: ${detail}`;
  }
  return text;
}
