import {afterAll, describe, expect, it} from "@jest/globals";
import {execFile} from "node:child_process";
import {readdirSync, readFileSync, writeFileSync} from "node:fs";
import {join} from "node:path";
import {fileURLToPath} from "node:url";
import {ClassicLevel} from "classic-level";
import {toRootHex} from "@lodestar/utils";
import {devChainConfig} from "../../src/config/chainConfig.ts";
import {Bucket} from "../../src/db/buckets.ts";
import {bucketKey, encodeUint64BE} from "../../src/db/keys.ts";
import {buildDataDir, compact, overwriteValue} from "../unit/db/fixtures/dataDir.ts";
import {NodeProcess, tempDataDir} from "./nodeProcess.ts";

const BIN = fileURLToPath(new URL("../../bin/beacon-gateway.js", import.meta.url));
const NODE_ARGS = ["--seconds-per-slot", "1", "--validators", "8"];

function cli(args: string[]): Promise<{code: number; stdout: string; stderr: string}> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], {timeout: 60_000}, (err, stdout, stderr) => resolve({code: err ? ((err as {code?: number}).code ?? 1) : 0, stdout, stderr}));
  });
}

function flipBytes(file: string, at: number, count = 8): void {
  const bytes = readFileSync(file);
  for (let i = at; i < Math.min(at + count, bytes.length); i++) bytes[i] ^= 0xff;
  writeFileSync(file, bytes);
}

/** A stopped node's data dir damaged in several ways at once: the node refuses it with a clear message, `db check` names each damage, `db repair` brings it back. */
describe("a damaged database", () => {
  const data = tempDataDir("db-damage");
  const nodes: NodeProcess[] = [];
  afterAll(async () => {
    for (const node of nodes) await node.stop("SIGKILL");
    data.remove();
  });

  it(
    "is named at start, found by db check, repaired back to the last whole finalized state; damaged slashing protection is refused",
    async () => {
      const config = devChainConfig({secondsPerSlot: 1, genesisFork: "fulu", forkEpochs: {}});
      const built = await buildDataDir(data.dir, config, 8);
      const clean = await cli(["db", "check", "--data-dir", data.dir]);
      expect(clean.stdout).toContain("no damage found");
      expect(clean.code).toBe(0);

      // a block whose bytes no longer hash to its key, and an archived state with flipped bytes
      const hotKey = bucketKey(Bucket.block, built.hotRoots[1]);
      const stateKey = bucketKey(Bucket.stateArchive, encodeUint64BE(built.laterStateSlot));
      const db = new ClassicLevel<Uint8Array, Uint8Array>(built.dbDir, {keyEncoding: "view", valueEncoding: "view"});
      const other = (await db.get(bucketKey(Bucket.block, built.hotRoots[0])))!;
      const stateBytes = (await db.get(stateKey))!;
      await db.close();
      await overwriteValue(built.dbDir, hotKey, other);
      stateBytes[200] ^= 0xff;
      await overwriteValue(built.dbDir, stateKey, stateBytes);

      const found = await cli(["db", "check", "--data-dir", data.dir]);
      expect(found.code).toBe(1);
      expect(found.stdout).toContain(`block ${toRootHex(built.hotRoots[1])}: hash_tree_root`);
      expect(found.stdout).toMatch(/archived state 0x0000000000000008: hash_tree_root 0x[0-9a-f]{64} is not/);

      // found at start: the node reads the latest finalized state and checks its root
      const atStart = new NodeProcess(["node", "--data-dir", data.dir, ...NODE_ARGS]);
      nodes.push(atStart);
      expect((await atStart.exited).code).toBe(1);
      expect(atStart.stderr.join("")).toMatch(/the finalized state archived at slot 8 \(key 0x0000000000000008\) hashes to 0x[0-9a-f]{64}, a root it was not archived under/);
      expect(atStart.stderr.join("")).not.toMatch(/\n\s+at /);

      // then the manifest is damaged too: the node refuses to start, naming it, without a stack trace
      await compact(built.dbDir);
      const manifest = readdirSync(built.dbDir).find((f) => f.startsWith("MANIFEST-"))!;
      flipBytes(join(built.dbDir, manifest), 12);
      const refused = new NodeProcess(["node", "--data-dir", data.dir, ...NODE_ARGS]);
      nodes.push(refused);
      expect((await refused.exited).code).toBe(1);
      const message = refused.stderr.join("");
      expect(message).toContain(`the database in ${built.dbDir} is damaged`);
      expect(message).toContain(manifest);
      expect(message).toContain(`beacon-gateway db repair --data-dir ${data.dir}`);
      expect(message).not.toMatch(/\n\s+at /);
      const unopenable = await cli(["db", "check", "--data-dir", data.dir]);
      expect(unopenable.code).toBe(1);
      expect(unopenable.stdout).toContain(manifest);

      // damaged slashing protection: repair refuses and changes nothing
      const spDir = join(data.dir, "validator", "slashing-protection");
      const sp = new ClassicLevel<string, string>(spDir);
      await sp.put("block:0xaa", "{not json");
      await sp.close();
      const refusedRepair = await cli(["db", "repair", "--data-dir", data.dir]);
      expect(refusedRepair.code).toBe(1);
      expect(refusedRepair.stderr).toContain("slashing protection");
      expect(refusedRepair.stderr).toContain("Nothing was changed");
      expect(readFileSync(join(built.dbDir, manifest)).length).toBeGreaterThan(0);
      expect((await cli(["db", "check", "--data-dir", data.dir])).code).toBe(1);

      // restored (here: the bad record removed by hand), repair runs and rolls back below the damaged state
      const spFixed = new ClassicLevel<string, string>(spDir);
      await spFixed.del("block:0xaa");
      await spFixed.close();
      const repaired = await cli(["db", "repair", "--data-dir", data.dir]);
      expect(repaired.stderr).toBe("");
      expect(repaired.code).toBe(0);
      expect(repaired.stdout).toContain(`dropped block ${toRootHex(built.hotRoots[1])}`);
      expect(repaired.stdout).toContain("rolled back to the finalized state of slot 0");
      const after = await cli(["db", "check", "--data-dir", data.dir]);
      expect(after.stdout).toContain("no damage found");
      expect(after.code).toBe(0);

      const node = new NodeProcess(["node", "--data-dir", data.dir, ...NODE_ARGS]);
      nodes.push(node);
      const ready = await node.waitForLog((l) => l.msg === "chain ready", 60_000, "chain ready");
      expect(Number(ready.anchorSlot)).toBe(0);
    },
    120_000
  );
});
