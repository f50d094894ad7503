import {existsSync} from "node:fs";
import {ClassicLevel} from "classic-level";
import {describeLevelDamage, droppedLogRecords, clearDamageMark} from "./damage.ts";

/**
 * What is damaged in the LevelDB at `dir`, read whole without changing what it holds: each
 * value is passed to `decode`, which throws on a value it cannot read. An empty list when it
 * is whole; null when there is no database there. Throws on a database another process holds.
 */
export async function damageOfStore(dir: string, decode: (value: string) => unknown): Promise<string[] | null> {
  if (!existsSync(dir)) return null;
  const db = new ClassicLevel<string, string>(dir, {createIfMissing: false});
  try {
    await db.open();
  } catch (err) {
    const damage = describeLevelDamage(err);
    if (damage === null) throw err;
    return [damage];
  }
  const damage = droppedLogRecords(dir);
  try {
    for await (const [key, value] of db.iterator()) {
      try {
        decode(value);
      } catch (e) {
        damage.push(`the value of ${key} does not decode: ${(e as Error).message}`);
      }
    }
  } catch (err) {
    const found = describeLevelDamage(err);
    if (found === null) throw err;
    damage.push(found);
  } finally {
    await db.close();
  }
  return damage;
}

/**
 * LevelDB's repair of the database at `dir`: rebuilds the manifest from the table files it can
 * read and recovers the write-ahead log, dropping what is unreadable. Throws LevelDB's
 * LEVEL_LOCKED error if a running node holds the database.
 */
export async function repairLevel(dir: string): Promise<void> {
  // fails with LEVEL_LOCKED while a node holds the database; damage is what repair is for
  const probe = new ClassicLevel(dir, {createIfMissing: false});
  try {
    await probe.open();
    await probe.close();
  } catch (err) {
    const e = err as {code?: string; cause?: {code?: string}};
    if (e.code === "LEVEL_LOCKED" || e.cause?.code === "LEVEL_LOCKED") throw err;
  }
  await ClassicLevel.repair(dir);
}

export {clearDamageMark};
