import {afterAll, describe, expect, it} from "@jest/globals";
import {NodeProcess, chainView, getJson, tempDataDir, waitFor} from "./nodeProcess.ts";

// 1-second slots: the first finality, which the restarts resume from, comes 32 slots in
const SECONDS_PER_SLOT = 1;
const args = (dir: string) => ["node", "--rest", "--rest-port", "0", "--data-dir", dir, "--seconds-per-slot", String(SECONDS_PER_SLOT)];

/** Restarts keep the chain: same genesis, head and finality continue, no replay from genesis. */
describe("restart on the same data dir", () => {
  const data = tempDataDir("restart");
  const nodes: NodeProcess[] = [];
  afterAll(async () => {
    for (const node of nodes) await node.stop("SIGKILL");
    data.remove();
  });

  it(
    "after SIGTERM, and after SIGKILL in the middle of a block import",
    async () => {
      const first = new NodeProcess(args(data.dir));
      nodes.push(first);
      const url1 = await first.restUrl();
      const before = await waitFor("finality", 240_000, async () => {
        const view = await chainView(url1);
        return Number(view.finalized.epoch) >= 1 ? view : null;
      });
      expect((await first.stop("SIGTERM")).code).toBe(0);
      expect(first.logs.some((l) => l.msg === "stopped")).toBe(true);

      // Second start: resumes from the archived finalized state, not from genesis. A few slots
      // from now, to be past its start: a node that starts late proposes nothing for the slots
      // already gone, so the crash comes with the first block it imports from then on.
      const clockSlot = Math.floor((Date.now() / 1000 - Number(before.genesisTime)) / SECONDS_PER_SLOT);
      const crashFrom = clockSlot + 5;
      const second = new NodeProcess(args(data.dir), {BEACON_GATEWAY_FAILPOINT: `import:after-store@>=${crashFrom}`});
      nodes.push(second);
      const ready = await second.waitForLog((l) => l.msg === "chain ready", 60_000, "chain ready");
      expect(Number(ready.anchorSlot)).toBeGreaterThan(0);
      expect(Number(ready.headSlot)).toBeGreaterThanOrEqual(before.headSlot);
      const url2 = await second.restUrl();
      const afterSigterm = await chainView(url2);
      expect(afterSigterm.genesisTime).toBe(before.genesisTime);
      expect(afterSigterm.genesisValidatorsRoot).toBe(before.genesisValidatorsRoot);
      expect(Number(afterSigterm.finalized.epoch)).toBeGreaterThanOrEqual(Number(before.finalized.epoch));

      // The failpoint kills it right after that block is stored, before fork choice sees it.
      const crashed = await Promise.race([
        second.exited,
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no block imported from slot ${crashFrom} on within 60 s`)), 60_000).unref()),
      ]);
      expect(crashed.signal).toBe("SIGKILL");

      const third = new NodeProcess(args(data.dir));
      nodes.push(third);
      const url3 = await third.restUrl();
      const afterCrash = await chainView(url3);
      expect(afterCrash.genesisTime).toBe(before.genesisTime);
      expect(Number(afterCrash.finalized.epoch)).toBeGreaterThanOrEqual(Number(before.finalized.epoch));
      // The chain continues: the head moves past the crash slot.
      const crashSlot = Math.max(crashFrom, afterCrash.headSlot);
      await waitFor("head past the crash", 60_000, async () => ((await chainView(url3)).headSlot > crashSlot + 2 ? true : null));
      expect((await third.stop("SIGTERM")).code).toBe(0);
    },
    420_000
  );
});
