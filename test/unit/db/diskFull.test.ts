import {afterEach, beforeEach, describe, expect, it} from "@jest/globals";
import {BeaconDb} from "../../../src/db/beaconDb.ts";
import {DiskFullError, isWritePaused, RESUME_FREE_BYTES, setDiskProbe, setStorageFault} from "../../../src/db/diskFull.ts";
import {makeTempDir, removeDir, testConfig, testRoot} from "./helpers.ts";

/** What LevelDB rejects a write with when the disk is full. */
const noSpace = () => Object.assign(new Error("IO error: /data/beacon/000005.log: No space left on device"), {code: "LEVEL_IO_ERROR"});

/** Disk full, by a storage-layer failpoint (a tmpfs cannot be mounted here) and an injected free-space probe. */
describe("disk full (storage failpoint)", () => {
  let dir: string;
  let db: BeaconDb;
  let free = 0;
  beforeEach(async () => {
    dir = await makeTempDir();
    db = await BeaconDb.open(dir, testConfig);
    free = 0;
    setDiskProbe({freeBytes: () => free, intervalMs: 10});
  });
  afterEach(async () => {
    setStorageFault(null);
    await db.close();
    await removeDir(dir);
  });

  it("pauses every write without writing half of one, keeps reads, and resumes by itself once space returns", async () => {
    await db.canonicalBlocks.put(1, testRoot(1));
    setStorageFault(noSpace);
    await expect(db.batch([db.canonicalBlocks.putOp(2, testRoot(2)), db.canonicalBlocks.putOp(3, testRoot(3))])).rejects.toThrow(DiskFullError);
    // the disk had room again for a moment: writes stay paused until the space needed is free, not written half
    setStorageFault(null);
    free = RESUME_FREE_BYTES - 1;
    await expect(db.canonicalBlocks.put(4, testRoot(4))).rejects.toThrow(`no space left on the disk of ${dir}`);
    expect(isWritePaused(db.level)).toBe(true);
    expect(await db.canonicalBlocks.get(1)).toEqual(testRoot(1));
    expect(await db.canonicalBlocks.getRange(0, 10)).toEqual([{slot: 1, blockRoot: testRoot(1)}]);

    free = RESUME_FREE_BYTES;
    for (let i = 0; i < 200 && isWritePaused(db.level); i++) await new Promise((r) => setTimeout(r, 10));
    expect(isWritePaused(db.level)).toBe(false);
    await db.canonicalBlocks.put(2, testRoot(2));
    expect((await db.canonicalBlocks.getRange(0, 10)).map((e) => e.slot)).toEqual([1, 2]);
  });
});
