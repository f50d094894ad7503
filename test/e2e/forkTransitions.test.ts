import {afterAll, describe, expect, it} from "@jest/globals";
import {NodeProcess, getJson, tempDataDir} from "./nodeProcess.ts";

const SECONDS_PER_SLOT = 2;
const SLOTS_PER_EPOCH = 8;
const FORKS = ["phase0", "altair", "bellatrix", "capella", "deneb", "electra", "fulu"];

/** A chain that starts at phase0 and passes every fork, one per epoch, then finalizes in fulu. */
describe("fork transitions", () => {
  const data = tempDataDir("forks");
  let node: NodeProcess | undefined;
  afterAll(async () => {
    await node?.stop("SIGKILL");
    data.remove();
  });

  it(
    "passes phase0 → fulu and finalizes after fulu",
    async () => {
      node = new NodeProcess([
        "node", "--rest", "--rest-port", "0", "--data-dir", data.dir, "--seconds-per-slot", String(SECONDS_PER_SLOT),
        "--genesis-fork", "phase0", "--fork-epochs", "altair=1,bellatrix=2,capella=3,deneb=4,electra=5,fulu=6",
      ]);
      const url = await node.restUrl();
      const schedule = await getJson(url, "/eth/v1/config/fork_schedule");
      expect(schedule.body.data.map((f: {epoch: string}) => f.epoch)).toEqual(["0", "1", "2", "3", "4", "5", "6"]);

      const seen = new Map<string, number>();
      let finalizedEpoch = 0;
      const deadline = Date.now() + 12 * SLOTS_PER_EPOCH * SECONDS_PER_SLOT * 1000;
      while (Date.now() < deadline) {
        const res = await fetch(`${url}/eth/v2/beacon/blocks/head`);
        if (res.status === 200) {
          const version = res.headers.get("eth-consensus-version")!;
          const slot = Number(((await res.json()) as {data: {message: {slot: string}}}).data.message.slot);
          if (!seen.has(version)) seen.set(version, slot);
        }
        const fc = await getJson(url, "/eth/v1/beacon/states/head/finality_checkpoints");
        finalizedEpoch = Number(fc.body.data.finalized.epoch);
        if (finalizedEpoch >= 6) break;
        await new Promise((r) => setTimeout(r, SECONDS_PER_SLOT * 500));
      }
      for (const fork of FORKS.slice(1)) expect(seen.has(fork)).toBe(true);
      for (const [i, fork] of FORKS.slice(1).entries()) {
        expect(Math.floor(seen.get(fork)! / SLOTS_PER_EPOCH)).toBe(i + 1);
      }
      expect(finalizedEpoch).toBeGreaterThanOrEqual(6);
      const head = await fetch(`${url}/eth/v2/beacon/blocks/head`);
      const body = (await head.json()) as {data: {message: {body: {execution_payload: {block_number: string}}}}};
      expect(Number(body.data.message.body.execution_payload.block_number)).toBeGreaterThan(10);
    },
    14 * SLOTS_PER_EPOCH * SECONDS_PER_SLOT * 1000
  );
});
