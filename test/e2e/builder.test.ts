// suite: alone (the relay's bid must arrive within the builder timeout of a live slot)
import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import {createServer} from "node:net";
import {join} from "node:path";
import {NodeProcess, getJson, restNodeArgs, tempDataDir, waitFor} from "./nodeProcess.ts";

/**
 * A dev chain with `--builder` against `beacon-gateway mock-builder` over `mock-engine`, all
 * separate processes: the chain finalizes with blocks the relay built (its extra_data on chain);
 * a relay that withholds payloads costs the slots it withholds, each reported to the proposer,
 * until the circuit breaker trips and proposals build locally; a relay that is down costs nothing.
 */

const BUILDER_TEXT = "beacon-gateway mock-builder";

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const {port} = server.address() as {port: number};
      server.close(() => resolve(port));
    });
  });
}

describe("dev chain with an external builder", () => {
  const data = tempDataDir("builder");
  const jwtFile = join(data.dir, "jwt.hex");
  let engine: NodeProcess;
  let relay: NodeProcess;
  let node: NodeProcess;
  let url: string;
  let relayUrl: string;

  async function block(id: string | number): Promise<{slot: number; extraData: string} | null> {
    const {status, body} = await getJson(url, `/eth/v2/beacon/blocks/${id}`);
    if (status !== 200) return null;
    const {slot, body: blockBody} = body.data.message;
    return {slot: Number(slot), extraData: Buffer.from(blockBody.execution_payload.extra_data.slice(2), "hex").toString()};
  }

  beforeAll(async () => {
    engine = new NodeProcess(["mock-engine", "--port", "0", "--jwt-secret", jwtFile]);
    const enginePort = Number((await engine.waitForLog((l) => l.msg === "mock engine listening", 30_000, "mock engine to listen")).port);
    relayUrl = `http://127.0.0.1:${await freePort()}`;
    node = new NodeProcess(
      restNodeArgs(join(data.dir, "node"), [
        "--seconds-per-slot", "1",
        "--genesis-fork", "deneb",
        "--execution-endpoint", `http://127.0.0.1:${enginePort}`,
        "--jwt-secret", jwtFile,
        "--builder", relayUrl,
        "--builder-fault-slots", "1",
        "--builder-fault-window", "8",
      ])
    );
    url = await node.restUrl();
    relay = new NodeProcess([
      "mock-builder", "--port", new URL(relayUrl).port, "--engine", `http://127.0.0.1:${enginePort}`, "--jwt-secret", jwtFile, "--beacon-node", url,
    ]);
    await relay.waitForLog((l) => l.msg === "mock builder listening", 30_000, "the relay to listen");
  }, 90_000);

  afterAll(async () => {
    const exits = await Promise.all([node?.stop(), relay?.stop(), engine?.stop()]);
    data.remove();
    expect(exits[0]?.code).toBe(0);
  });

  it(
    "finalizes with relay-built blocks; a withholding relay trips the circuit breaker; a relay that is down loses no slot",
    async () => {
      // 1. Blocks built by the relay, and finality.
      const finalized = await waitFor("finality", 60_000, async () => {
        const {body} = await getJson(url, "/eth/v1/beacon/states/head/finality_checkpoints");
        return Number(body.data.finalized.epoch) >= 1 ? Number(body.data.finalized.epoch) : null;
      });
      // a relay-built block in the finalized chain (the first slots may be local: the relay starts after the node)
      const finalizedSlot = (await block("finalized"))!.slot;
      let relayBuilt: number | null = null;
      for (let slot = finalizedSlot; slot > 0 && relayBuilt === null; slot--) if ((await block(slot))?.extraData === BUILDER_TEXT) relayBuilt = slot;
      expect(finalized).toBeGreaterThanOrEqual(1);
      expect(relayBuilt).not.toBeNull();
      expect(node.logs.some((l) => l.msg === "Published blinded block (builder payload)")).toBe(true);
      // a v3 request answers the relay's block blinded, with the value headers; v2 (full blocks only) a local one
      const slot = (await block("head"))!.slot + 1;
      const query = `randao_reveal=0x${"c0" + "00".repeat(95)}&skip_randao_verification=`;
      const v3 = await fetch(`${url}/eth/v3/validator/blocks/${slot}?${query}`);
      const v3Body = (await v3.json()) as any;
      expect([v3.status, v3.headers.get("eth-execution-payload-blinded"), v3Body.execution_payload_blinded]).toEqual([200, "true", true]);
      expect(v3.headers.get("eth-execution-payload-value")).toBe("1000000000000000");
      expect(Buffer.from(v3Body.data.body.execution_payload_header.extra_data.slice(2), "hex").toString()).toBe(BUILDER_TEXT);
      const v2Body = (await (await fetch(`${url}/eth/v2/validator/blocks/${slot}?${query}`)).json()) as any;
      expect(Buffer.from(v2Body.data.block.body.execution_payload.extra_data.slice(2), "hex").toString()).not.toBe(BUILDER_TEXT);

      // 2. The relay withholds the payloads of signed blinded blocks: the proposer is told which slot
      // failed, and after more missed slots than allowed the breaker trips and blocks are local again.
      const withheldFrom = (await block("head"))!.slot;
      await fetch(`${relayUrl}/mock/fault`, {method: "POST", body: JSON.stringify({fault: "withhold"})});
      const failure = await node.waitForLog((l) => l.msg === "Block proposal failed" && /withheld/.test(String(l.error)), 20_000, "a withheld payload reported");
      expect(String(failure.error)).toMatch(/^Cannot publish blinded block: the builder relay did not reveal the payload of slot \d+/);
      const trip = await node.waitForLog((l) => l.msg === "builder circuit breaker tripped: proposals build local payloads" && Number(l.slot) > withheldFrom, 20_000, "the breaker to trip");
      const local = await waitFor("a local block after the trip", 15_000, async () => {
        const head = await block("head");
        return head && head.slot >= Number(trip.slot) ? head : null;
      });
      expect(local.extraData).not.toBe(BUILDER_TEXT);

      // 3. The relay recovers, the breaker resets; then the relay goes down: every slot still gets its block.
      await fetch(`${relayUrl}/mock/fault`, {method: "POST", body: JSON.stringify({fault: "none"})});
      await node.waitForLog((l) => l.msg === "builder circuit breaker reset: proposals ask the builder again", 30_000, "the breaker to reset");
      await relay.stop();
      const downFrom = (await block("head"))!.slot;
      await node.waitForLog((l) => l.reason === "relay_error" && Number(l.slot) > downFrom, 10_000, "a proposal asking the stopped relay");
      await waitFor("four more slots", 15_000, async () => ((await block("head"))!.slot >= downFrom + 5 ? true : null));
      for (let slot = downFrom + 1; slot <= downFrom + 4; slot++) {
        const b = await block(slot);
        expect({slot, present: b !== null}).toEqual({slot, present: true});
        expect(b!.extraData).not.toBe(BUILDER_TEXT);
      }
    },
    150_000
  );
});
