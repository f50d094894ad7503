import {maxOf, type SignedAttestationRecord, type SignedBlockRecord} from "./interchange.ts";

/**
 * How imported history and pruning fold into the slashing protection records, as pure
 * functions (slashingProtection.ts reads and writes the records).
 *
 * Blocks are kept minimal: the highest slot signed. Attestations are kept complete above a
 * low watermark (source, target): no attestation with a source below it or a target at or
 * below it is signed, except a repeat of the record kept at the watermark's target. Folding
 * history into the watermark (EIP-3076's conditions 2, 4 and 5; its advice to minimal
 * databases, and its advice to complete ones against gaps) never lowers protection:
 * every record folded away has source <= watermark source and target <= watermark target,
 * so no vote above the watermark can be slashable with respect to it.
 */

export interface Watermark {
  source: number;
  target: number;
}

/** The one root of these records when all have it, else null (unknown or conflicting content). */
function sharedRoot(records: Array<{signingRoot: string | null}>): string | null {
  const root = records[0]?.signingRoot ?? null;
  return root !== null && records.every((r) => r.signingRoot === root) ? root : null;
}

/**
 * The block record after an import: the highest slot of the stored record and the imported
 * blocks. Its root survives only when every block known at that slot has that same root.
 * Undefined when the stored record stays as it is.
 */
export function mergeBlocks(stored: SignedBlockRecord | undefined, imported: SignedBlockRecord[]): SignedBlockRecord | undefined {
  if (imported.length === 0) return undefined;
  const slot = maxOf(imported.map((b) => b.slot));
  if (stored !== undefined && stored.slot > slot) return undefined;
  const atSlot = imported.filter((b) => b.slot === slot);
  if (stored !== undefined && stored.slot === slot) atSlot.push(stored);
  const merged = {slot, signingRoot: sharedRoot(atSlot)};
  if (stored !== undefined && stored.slot === merged.slot && stored.signingRoot === merged.signingRoot) return undefined;
  return merged;
}

export interface Collapse {
  /** the record kept at the new watermark's target */
  record: SignedAttestationRecord;
  watermark: Watermark;
  /** targets of stored records to delete: every one below the watermark's target */
  removed: number[];
}

/**
 * Folds every record at or below `target` (`stored`: the stored ones, `imported`: more from a
 * file) into one record at `target`, and raises the watermark to it. Its source is the
 * highest source of the folded records and of the old watermark; its signing root survives
 * only if every record at `target` is that same real message.
 *
 * `target` must be at least the old watermark's target and every folded source; the caller
 * chooses it so (the watermark only rises).
 */
export function collapseAt(target: number, stored: SignedAttestationRecord[], imported: SignedAttestationRecord[], low: Watermark | undefined): Collapse {
  const folded = stored.concat(imported);
  const source = maxOf(
    folded.map((r) => r.source),
    low?.source ?? 0
  );
  const atTarget = folded.filter((r) => r.target === target);
  const real = atTarget.length > 0 && atTarget.every((r) => r.source === source);
  return {
    record: {source, target, signingRoot: real ? sharedRoot(atTarget) : null},
    watermark: {source, target},
    removed: stored.filter((r) => r.target < target).map((r) => r.target),
  };
}

/**
 * The target at which to fold an import's attestations: their highest target, never below
 * their highest source (a record with source > target is folded conservatively) nor below
 * the current watermark. Undefined when there is nothing to import.
 */
export function importTarget(imported: SignedAttestationRecord[], low: Watermark | undefined): number | undefined {
  if (imported.length === 0) return undefined;
  return maxOf(
    imported.map((r) => Math.max(r.source, r.target)),
    low?.target ?? 0
  );
}

/**
 * The target at which pruning folds the history: the highest stored target at least
 * `keepEpochs` below the newest one. Undefined when nothing would be removed.
 * `targets` are the stored records' targets, ascending.
 */
export function pruneTarget(targets: number[], keepEpochs: number): number | undefined {
  if (targets.length < 2) return undefined;
  const cutoff = targets[targets.length - 1] - keepEpochs;
  let chosen: number | undefined;
  for (const t of targets) if (t <= cutoff) chosen = t;
  return chosen !== undefined && chosen > targets[0] ? chosen : undefined;
}
