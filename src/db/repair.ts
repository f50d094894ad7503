import type {ChainForkConfig} from "@lodestar/config";
import {computeAnchorCheckpoint} from "@lodestar/state-transition";
import {toRootHex} from "@lodestar/utils";
import {Bucket} from "./buckets.ts";
import {ChainMetaRepository} from "./chainMeta.ts";
import {type CheckReport, type DbProblem, checkDb} from "./check.ts";
import {bucketKey, bucketRange, encodeUint64BE} from "./keys.ts";
import {type DbOp, type LevelDb, writeBatch} from "./repository.ts";

export interface RollbackResult {
  /** what was dropped or rewritten, one line each */
  actions: string[];
  /** the archived finalized state the chain now starts from */
  anchor: {slot: number; epoch: number};
  /** problems still there after the rollback (none when the database is whole again) */
  remaining: DbProblem[];
}

/** No archived finalized state survived: nothing to roll back to. */
export class NothingToRollBackToError extends Error {}

/**
 * After LevelDB's own repair: drops every damaged record `checkDb` finds and, when the
 * unfinalized part of the chain (or a later archived state) is lost or damaged, rolls the chain
 * back to the latest archived finalized state that is whole: the unfinalized block index is
 * emptied and the finalized and justified checkpoints are set to that state's, so that the node
 * starts from it and syncs forward again from its peers.
 */
export async function rollBackDamage(db: LevelDb, config: ChainForkConfig): Promise<RollbackResult> {
  const report = await checkDb(db, config);
  const anchor = await lastWholeState(db, config, report);
  if (!anchor) throw new NothingToRollBackToError("no archived finalized state is whole with its block: there is nothing to roll back to; move the data dir's beacon/ folder away and sync again (e.g. with --checkpoint-sync-url)");
  const {state, checkpoint, slot} = anchor;
  const meta = new ChainMetaRepository(db);
  const ops: DbOp[] = [];
  const actions: string[] = [];
  for (const problem of report.problems) {
    if (!problem.key) continue;
    ops.push({type: "del", key: problem.key});
    actions.push(`dropped ${problem.where} (${problem.what})`);
  }
  const storedFinalized = await readOrNull(() => meta.finalizedCheckpoint.get());
  const later = report.goodStates.filter((s) => s.slot > slot);
  if (later.length > 0 || needsRollback(report, slot, storedFinalized?.epoch ?? null, checkpoint.epoch)) {
    // what lies above the anchor is dropped: the archived states (their blocks are lost or damaged), the canonical index entries and the unfinalized block index
    for (const s of later) ops.push({type: "del", key: bucketKey(Bucket.stateArchive, encodeUint64BE(s.slot))}, {type: "del", key: bucketKey(Bucket.stateRootIndex, s.stateRoot)});
    for await (const key of db.keys({gt: bucketKey(Bucket.canonicalBlockRoot, encodeUint64BE(slot)), lt: bucketRange(Bucket.canonicalBlockRoot).lt})) ops.push({type: "del", key});
    for await (const key of db.keys(bucketRange(Bucket.hotBlock))) ops.push({type: "del", key});
    ops.push(meta.finalizedCheckpoint.putOp(checkpoint), meta.justifiedCheckpoint.putOp(checkpoint), meta.headRoot.deleteOp());
    actions.push(`rolled back to the finalized state of slot ${slot} (epoch ${checkpoint.epoch}): what was above it is dropped, the node syncs it again`);
  }
  if ((await readOrNull(() => meta.genesisTime.get())) === null) {
    ops.push(meta.genesisTime.putOp(state.genesisTime));
    actions.push("restored the genesis time from the finalized state");
  }
  if ((await readOrNull(() => meta.genesisValidatorsRoot.get())) === null) {
    ops.push(meta.genesisValidatorsRoot.putOp(state.genesisValidatorsRoot));
    actions.push("restored the genesis validators root from the finalized state");
  }
  await writeBatch(db, ops);
  const after = await checkDb(db, config);
  return {actions, anchor: {slot, epoch: checkpoint.epoch}, remaining: after.problems};
}

/** The archived state with the highest slot that is whole and whose checkpoint block is whole too. */
async function lastWholeState(db: LevelDb, config: ChainForkConfig, report: CheckReport) {
  for (const {slot} of [...report.goodStates].reverse()) {
    const bytes = (await db.get(bucketKey(Bucket.stateArchive, encodeUint64BE(slot))))!;
    const state = config.getForkTypes(slot).BeaconState.deserializeToViewDU(bytes);
    const {checkpoint} = computeAnchorCheckpoint(config, state);
    if (report.goodBlocks.has(toRootHex(checkpoint.root))) return {state, checkpoint, slot};
  }
  return null;
}

function needsRollback(report: CheckReport, anchorSlot: number, storedFinalizedEpoch: number | null, anchorEpoch: number): boolean {
  if (report.problems.some((p) => p.hot)) return true;
  // a damaged archived state above the anchor: the stored checkpoints may be past what survives
  const damagedLater = report.problems.some((p) => p.key?.[0] === Bucket.stateArchive && Number(Buffer.from(p.key.subarray(1)).readBigUInt64BE()) > anchorSlot);
  return damagedLater || storedFinalizedEpoch === null || storedFinalizedEpoch > anchorEpoch;
}

async function readOrNull<T>(read: () => Promise<T | null>): Promise<T | null> {
  try {
    return await read();
  } catch {
    return null;
  }
}
