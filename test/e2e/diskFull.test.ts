import {afterAll, describe, expect, it} from "@jest/globals";
import {execFile} from "node:child_process";
import {rmSync} from "node:fs";
import {join} from "node:path";
import {fileURLToPath} from "node:url";
import {NodeProcess, chainView, getJson, restNodeArgs, waitFor} from "./nodeProcess.ts";
import {TmpfsNamespace, canMountTmpfs, fillUp} from "../faults/tmpfs.ts";

/**
 * A node whose data dir is on a real filesystem that fills up: a 320 MiB tmpfs mounted in a
 * mount namespace of the test's own (test/faults/tmpfs.ts), so nothing outside it sees the
 * mount (the validators' directory is another tmpfs, which stays free). The test fills the disk
 * from outside through /proc/<pid>/root while the chain runs.
 */

const BIN = fileURLToPath(new URL("../../bin/beacon-gateway.js", import.meta.url));
/** the space the node waits for before it writes again is 256 MiB (src/db/diskFull.ts) */
const TMPFS_SIZE = "320m";

describe("a full disk (a real tmpfs that fills)", () => {
  let ns: TmpfsNamespace | null = null;
  const nodes: NodeProcess[] = [];
  afterAll(async () => {
    for (const node of nodes) await node.stop("SIGKILL");
    ns?.close();
  });

  (canMountTmpfs ? it : it.skip)(
    "stops importing and says so once with the data dir, serves reads, resumes by itself when space returns; nothing finalized lost, the database checks whole",
    async () => {
      // the validators' slashing protection on a disk of its own: the beacon database's disk fills
      // (on one shared disk the validators stop first, refusing to sign what they cannot record)
      ns = await TmpfsNamespace.open(TMPFS_SIZE, [{path: "data/validator", size: "64m"}]);
      const {mountPoint} = ns;
      const inside = (path: string) => ns!.inside(path);
      const dataDir = join(mountPoint, "data");
      const node = new NodeProcess(restNodeArgs(dataDir, ["--seconds-per-slot", "1", "--genesis-fork", "phase0"]), {}, {mountNamespaceOf: ns.pid});
      nodes.push(node);
      const url = await node.restUrl();
      await waitFor("a few blocks", 30_000, async () => ((await chainView(url)).headSlot >= 4 ? true : null));

      // the disk fills: a file takes all but 16 KiB of what is free
      const before = await chainView(url);
      const rootBefore = (await getJson(url, `/eth/v1/beacon/blocks/${before.headSlot}/root`)).body.data.root as string;
      fillUp(inside(join(mountPoint, "filler")));
      const full = await node.waitForLog((l) => /^the disk is full/.test(l.msg), 20_000, "the disk-full line");
      expect(full.level).toBe(50);
      expect(full.dir).toBe(join(dataDir, "beacon"));

      // paused: the head stays, reads are served
      const paused = await chainView(url);
      await new Promise((r) => setTimeout(r, 3000));
      const still = await chainView(url);
      expect(still.headSlot).toBe(paused.headSlot);
      expect((await getJson(url, `/eth/v1/beacon/blocks/${before.headSlot}/root`)).body.data.root).toBe(rootBefore);
      expect((await getJson(url, "/eth/v1/beacon/states/head/finality_checkpoints")).status).toBe(200);
      expect(node.logs.filter((l) => /^the disk is full/.test(l.msg))).toHaveLength(1);
      // a block the node cannot store is refused with the reason, not an internal error
      expect(node.logs.filter((l) => l.msg === "Unhandled error in API handler")).toEqual([]);

      // space returns: the node resumes by itself and the chain goes on
      rmSync(inside(join(mountPoint, "filler")));
      const back = await node.waitForLog((l) => /^space is back/.test(l.msg), 20_000, "writes to resume");
      // nothing produced meanwhile: the node's validators were told why
      const during = node.logs.slice(node.logs.indexOf(full), node.logs.indexOf(back));
      expect(during.filter((l) => l.msg === "Published block")).toEqual([]);
      expect(during.some((l) => l.msg === "Block proposal failed" && /writes are paused/.test(String(l.error)))).toBe(true);
      await waitFor("the head to move again", 20_000, async () => ((await chainView(url)).headSlot >= still.headSlot + 2 ? true : null));
      const after = await chainView(url);
      expect(Number(after.finalized.epoch)).toBeGreaterThanOrEqual(Number(before.finalized.epoch));
      expect((await getJson(url, `/eth/v1/beacon/blocks/${before.headSlot}/root`)).body.data.root).toBe(rootBefore);
      expect(node.proc.exitCode).toBeNull();

      // the database opens afterwards, every record whole
      expect((await node.stop("SIGTERM")).code).toBe(0);
      const check = await new Promise<{code: number; stdout: string; stderr: string}>((resolve) => {
        execFile("nsenter", ["-t", String(ns!.pid), "-m", "--", process.execPath, BIN, "db", "check", "--data-dir", dataDir], {timeout: 60_000}, (err, stdout, stderr) =>
          resolve({code: err ? ((err as {code?: number}).code ?? 1) : 0, stdout, stderr})
        );
      });
      expect(check).toMatchObject({code: 0});
    },
    120_000
  );
});
