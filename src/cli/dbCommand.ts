import {existsSync} from "node:fs";
import {join} from "node:path";
import type {DbCommandOptions} from "./dbOptions.ts";
import {describeLevelDamage, droppedLogRecords, markDamaged, recordedDamage} from "../db/damage.ts";
import {presetOfFingerprint, readStoredFingerprint} from "../db/storedFingerprint.ts";
import {clearDamageMark, damageOfStore, repairLevel} from "../db/levelRepair.ts";
import {initLogging, parseLogDirective} from "../log.ts";

const print = (line: string): void => void process.stdout.write(line + "\n");
const fail = (line: string): void => void process.stderr.write(`beacon-gateway: ${line}\n`);

/** `beacon-gateway db check|repair`, its options parsed (main.ts): resolves to the exit code. */
export async function runDb(action: "check" | "repair", opts: DbCommandOptions): Promise<number> {
  initLogging({directive: parseLogDirective("WARN"), format: "text"});
  const dir = join(opts.dataDir, "beacon");
  if (!existsSync(dir)) {
    fail(`there is no node database in ${dir} (is ${opts.dataDir} the node's --data-dir?)`);
    return 1;
  }
  try {
    return await (action === "check" ? check(dir) : repair(opts.dataDir, dir));
  } catch (err) {
    if (!isLocked(err)) throw err;
    fail(`the database in ${dir} (or the slashing protection beside it) is in use: stop the node first`);
    return 1;
  }
}

function isLocked(err: unknown): boolean {
  const e = err as {code?: string; cause?: {code?: string}} | null;
  return e?.code === "LEVEL_LOCKED" || e?.cause?.code === "LEVEL_LOCKED";
}

class NoFingerprintError extends Error {}

/** Fixes the preset from the stored fingerprint, then loads the chain's config (lodestar loads here, not before). */
async function storedConfig(dir: string) {
  const fingerprint = await readStoredFingerprint(dir);
  if (fingerprint === null) throw new NoFingerprintError(`the database in ${dir} has no chain fingerprint: it is not a beacon-gateway database, or its chain meta is lost`);
  const preset = presetOfFingerprint(fingerprint);
  if (preset !== null) process.env.LODESTAR_PRESET = preset;
  const {configFromFingerprint} = await import("../db/chainFingerprint.ts");
  return configFromFingerprint(fingerprint);
}

async function check(dir: string): Promise<number> {
  const lines = (recordedDamage(dir) ?? []).map((d) => `found earlier: ${d}`);
  let config;
  try {
    config = await storedConfig(dir);
  } catch (err) {
    const damage = err instanceof NoFingerprintError ? err.message : describeLevelDamage(err);
    if (damage === null) throw err;
    for (const line of [...lines, `cannot open: ${damage}`]) print(line);
    print(`the database in ${dir} is damaged: run \`beacon-gateway db repair\``);
    return 1;
  }
  // opening recovered the write-ahead log: what LevelDB had to drop of it is damage too, remembered until repaired
  const dropped = droppedLogRecords(dir);
  if (dropped.length > 0) markDamaged(dir, [...(recordedDamage(dir) ?? []), ...dropped]);
  lines.push(...dropped);
  const {Level} = await import("level");
  const {checkDb} = await import("../db/check.ts");
  const db = new Level<Uint8Array, Uint8Array>(dir, {keyEncoding: "view", valueEncoding: "view", createIfMissing: false});
  await db.open();
  try {
    const report = await checkDb(db, config);
    lines.push(...report.problems.map((p) => `${p.where}: ${p.what}`));
    for (const line of lines) print(line);
    if (lines.length === 0) {
      print(`${dir}: ${report.records} records read, no damage found (latest whole finalized state at slot ${report.goodStates.at(-1)?.slot})`);
      return 0;
    }
    print(`${dir}: ${report.records} records read, ${lines.length} problem(s): run \`beacon-gateway db repair\``);
    return 1;
  } finally {
    await db.close();
  }
}

async function repair(dataDir: string, dir: string): Promise<number> {
  // where the node's own validators keep it (validator/slashingProtection.ts, not imported: it would load lodestar before the preset is fixed)
  const spDir = join(dataDir, "validator", "slashing-protection");
  const spDamage = await damageOfStore(spDir, (value) => JSON.parse(value));
  if (spDamage !== null && spDamage.length > 0) {
    for (const line of spDamage) fail(`slashing protection: ${line}`);
    fail(`the slashing protection records in ${spDir} are damaged; they are never rolled back or rebuilt: restore them from a backup, or move them away and import an EIP-3076 interchange file (beacon-gateway slashing-protection import), then run db repair again. Nothing was changed.`);
    return 1;
  }
  await repairLevel(dir);
  const fingerprint = await readStoredFingerprint(dir);
  if (fingerprint === null) {
    fail(`nothing of the chain survived LevelDB's repair of ${dir} (its chain fingerprint is gone): move that folder away and sync again (e.g. with --checkpoint-sync-url)`);
    return 1;
  }
  const config = await storedConfig(dir);
  const {Level} = await import("level");
  const {rollBackDamage, NothingToRollBackToError} = await import("../db/repair.ts");
  const db = new Level<Uint8Array, Uint8Array>(dir, {keyEncoding: "view", valueEncoding: "view", createIfMissing: false});
  await db.open();
  try {
    const result = await rollBackDamage(db, config);
    for (const line of result.actions) print(line);
    for (const p of result.remaining) print(`still damaged: ${p.where}: ${p.what}`);
    if (result.remaining.length > 0) return 1;
    clearDamageMark(dir);
    print(`${dir} repaired: the node starts from the finalized state of slot ${result.anchor.slot} (epoch ${result.anchor.epoch})`);
    return 0;
  } catch (err) {
    if (!(err instanceof NothingToRollBackToError)) throw err;
    fail(err.message);
    return 1;
  } finally {
    await db.close();
  }
}
