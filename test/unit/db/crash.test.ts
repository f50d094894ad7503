import {describe, it, expect, beforeEach, afterEach} from "@jest/globals";
import {spawn} from "node:child_process";
import {fileURLToPath} from "node:url";
import {BeaconDb} from "../../../src/db/beaconDb.ts";
import {readStep, stepBlockRoot} from "./fixtures/crashBatch.ts";
import {makeTempDir, removeDir, testConfig} from "./helpers.ts";

const WRITER = fileURLToPath(new URL("./fixtures/batchWriter.ts", import.meta.url));

/**
 * Runs the writer from step `first` until it reported `commits` batches (plus a random few ms),
 * then kills it with SIGKILL. Returns the last step the writer reported as committed.
 */
function runAndKill(dir: string, first: number, commits: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WRITER, dir, String(first)], {
      env: {...process.env, LODESTAR_PRESET: "minimal", LOG_LEVEL: "WARN"},
      stdio: ["ignore", "pipe", "pipe"],
    });
    let lastCommitted = first - 1;
    let stdout = "";
    let stderr = "";
    let killing = false;
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      const lines = stdout.split("\n");
      stdout = lines.pop() ?? "";
      for (const line of lines) {
        const match = /^committed (\d+)$/.exec(line);
        if (match) lastCommitted = Number(match[1]);
      }
      if (!killing && lastCommitted - first + 1 >= commits) {
        killing = true;
        setTimeout(() => child.kill("SIGKILL"), Math.floor(Math.random() * 5));
      }
    });
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      if (signal === "SIGKILL") resolve(lastCommitted);
      else reject(new Error(`writer exited with code ${code} before it was killed: ${stderr}`));
    });
  });
}

describe("db crash safety", () => {
  let dir: string;

  beforeEach(async () => {
    dir = await makeTempDir();
  });

  afterEach(async () => {
    await removeDir(dir);
  });

  it("keeps every batch whole when the writing process is killed with SIGKILL", async () => {
    let next = 0;
    for (let round = 0; round < 3; round++) {
      const lastCommitted = await runAndKill(dir, next, 15 + round * 5);
      expect(lastCommitted).toBeGreaterThanOrEqual(next);

      const db = await BeaconDb.open(dir, testConfig);
      try {
        // every batch reported as committed is complete and intact
        for (let i = 0; i <= lastCommitted; i++) {
          expect({i, ...(await readStep(db, i))}).toEqual({i, present: [true, true, true, true], intact: true});
        }
        // the batch in flight at the kill is stored whole or not at all; none after it
        const inFlight = await readStep(db, lastCommitted + 1);
        expect(inFlight.intact).toBe(true);
        expect([[true, true, true, true], [false, false, false, false]]).toContainEqual(inFlight.present);
        expect((await readStep(db, lastCommitted + 2)).present).toEqual([false, false, false, false]);
        // the head root was written in the same batches: it names the last complete one
        const last = inFlight.present[0] ? lastCommitted + 1 : lastCommitted;
        expect(await db.chainMeta.headRoot.get()).toEqual(stepBlockRoot(last));
        next = last + 1;
      } finally {
        await db.close();
      }
    }
  }, 60_000);
});
