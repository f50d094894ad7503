import {afterEach, beforeEach, describe, expect, it} from "@jest/globals";
import {toRootHex} from "@lodestar/utils";
import {BeaconDb} from "../../../src/db/beaconDb.ts";
import {Bucket} from "../../../src/db/buckets.ts";
import {checkDb} from "../../../src/db/check.ts";
import {bucketKey, encodeUint64BE} from "../../../src/db/keys.ts";
import {rollBackDamage} from "../../../src/db/repair.ts";
import {buildDataDir, type BuiltDataDir} from "./fixtures/dataDir.ts";
import {makeTempDir, removeDir, testConfig, testRoot} from "./helpers.ts";

/** db check and the rollback of db repair, on a real LevelDB holding what a node stores, damaged record by record. */
describe("db check", () => {
  let dir: string;
  let built: BuiltDataDir;
  let db: BeaconDb;
  beforeEach(async () => {
    dir = await makeTempDir();
    built = await buildDataDir(dir, testConfig, 8);
    db = await BeaconDb.open(built.dbDir, testConfig);
  });
  afterEach(async () => {
    await db.close();
    await removeDir(dir);
  });

  const problems = async () => (await checkDb(db.level, testConfig)).problems.map((p) => `${p.where}: ${p.what}`);

  it("finds a whole database clean", async () => {
    const report = await checkDb(db.level, testConfig);
    expect(report.problems).toEqual([]);
    expect(report.goodStates.map((s) => s.slot)).toEqual([0, 8]);
    expect(report.records).toBeGreaterThan(10);
  });

  it("names each damaged record by its key", async () => {
    const [hot9, hot10] = built.hotRoots;
    await db.level.batch([
      // a block that no longer decodes, a canonical entry to a block never stored, a lost checkpoint, an undecodable meta value, an unknown bucket
      {type: "put", key: bucketKey(Bucket.block, hot10), value: Uint8Array.of(1, 2, 3)},
      {type: "put", key: bucketKey(Bucket.canonicalBlockRoot, encodeUint64BE(3)), value: testRoot(3)},
      {type: "del", key: bucketKey(Bucket.chainMeta, new TextEncoder().encode("justifiedCheckpoint"))},
      {type: "put", key: bucketKey(Bucket.chainMeta, new TextEncoder().encode("genesisTime")), value: Uint8Array.of(1)},
      {type: "put", key: Uint8Array.of(200, 1), value: Uint8Array.of(1)},
    ]);
    const found = await problems();
    expect(found).toEqual(
      expect.arrayContaining([
        expect.stringMatching(new RegExp(`^block ${toRootHex(hot10)}: undecodable`)),
        `unfinalized block index 0x${"000000000000000a" + toRootHex(hot10).slice(2)}: points to block ${toRootHex(hot10)}, missing or damaged`,
        `canonical index slot 3: points to block ${toRootHex(testRoot(3))}, missing or damaged`,
        "chain meta justifiedCheckpoint: missing",
        expect.stringMatching(/^chain meta genesisTime: undecodable/),
        "bucket 200: a bucket this version does not know (a newer version's data dir, or damage)",
      ])
    );
    expect(found).toHaveLength(6);
    expect(found.join("\n")).not.toContain(toRootHex(hot9).slice(2, 20) + ": ");
  });

  it("repair drops the damaged records and rolls back above the last whole finalized state", async () => {
    const stateKey = bucketKey(Bucket.stateArchive, encodeUint64BE(8));
    const bytes = (await db.level.get(stateKey))!;
    bytes[300] ^= 0xff;
    await db.level.put(stateKey, bytes);
    expect((await problems()).some((p) => p.startsWith("archived state 0x0000000000000008: hash_tree_root"))).toBe(true);

    const result = await rollBackDamage(db.level, testConfig);
    expect(result.remaining).toEqual([]);
    expect(result.anchor).toEqual({slot: 0, epoch: 0});
    expect(await db.hotBlocks.getAll()).toEqual([]);
    expect(await db.stateArchive.getSlots()).toEqual([0]);
    expect(await db.chainMeta.finalizedCheckpoint.get()).toEqual({epoch: 0, root: built.genesisRoot});
    // what was whole and below the anchor stays
    expect(await db.blocks.has(built.genesisRoot)).toBe(true);
  });
});
