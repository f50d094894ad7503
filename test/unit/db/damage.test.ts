import {afterEach, beforeEach, describe, expect, it} from "@jest/globals";
import {readdirSync, readFileSync, statSync, truncateSync, writeFileSync} from "node:fs";
import {join} from "node:path";
import {BeaconDb} from "../../../src/db/beaconDb.ts";
import {checkDb} from "../../../src/db/check.ts";
import {DbDamagedError} from "../../../src/db/damage.ts";
import {rollBackDamage} from "../../../src/db/repair.ts";
import {repairLevel} from "../../../src/db/levelRepair.ts";
import {buildDataDir, compact} from "./fixtures/dataDir.ts";
import {makeTempDir, removeDir, testConfig} from "./helpers.ts";

/** Real LevelDB files of a stopped node's database, damaged as a bad sector or a copy of a running node would. */
describe("damaged database files", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await makeTempDir();
  });
  afterEach(async () => {
    await removeDir(dir);
  });

  async function openError(dbDir: string): Promise<DbDamagedError> {
    const err = await BeaconDb.open(dbDir, testConfig).then(
      async (db) => {
        // damage in a table file shows when it is read
        await db.stateArchive.getLatestBytes().finally(() => db.close());
        return null;
      },
      (e: unknown) => e
    );
    expect(err).toBeInstanceOf(DbDamagedError);
    return err as DbDamagedError;
  }

  it("a truncated table file is named when read, still refused at the next open; repair invents nothing when no whole state is left", async () => {
    const built = await buildDataDir(dir, testConfig, 8);
    const db0 = await BeaconDb.open(built.dbDir, testConfig);
    expect((await checkDb(db0.level, testConfig)).problems).toEqual([]);
    await db0.close();
    await compact(built.dbDir);
    const table = readdirSync(built.dbDir).find((f) => f.endsWith(".ldb"))!;
    truncateSync(join(built.dbDir, table), Math.floor(statSync(join(built.dbDir, table)).size / 2));
    expect((await openError(built.dbDir)).message).toContain(`the table file ${table} is unreadable`);
    // remembered: the next open refuses too, without reading the table
    expect((await openError(built.dbDir)).message).toContain(table);

    await repairLevel(built.dbDir);
    const {Level} = await import("level");
    const level = new Level<Uint8Array, Uint8Array>(built.dbDir, {keyEncoding: "view", valueEncoding: "view"});
    await level.open();
    // all was in the one table: LevelDB's repair keeps nothing of it, and nothing is invented
    await expect(rollBackDamage(level, testConfig)).rejects.toThrow("nothing to roll back to");
    await level.close();
  });

  it("a damaged write-ahead log is named when LevelDB drops part of it at open", async () => {
    const built = await buildDataDir(dir, testConfig, 8);
    const log = readdirSync(built.dbDir).find((f) => f.endsWith(".log"))!;
    const bytes = readFileSync(join(built.dbDir, log));
    for (let i = 100; i < 108; i++) bytes[i] ^= 0xff;
    writeFileSync(join(built.dbDir, log), bytes);
    const err = await openError(built.dbDir);
    expect(err.message).toContain(`the write-ahead log ${log} was damaged: LevelDB dropped`);
    expect(err.message).toContain("db repair");
  });
});
