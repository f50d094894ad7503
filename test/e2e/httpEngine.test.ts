import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import {join} from "node:path";
import {createJwt, loadOrCreateJwtSecret} from "../../src/execution/jwt.ts";
import {NodeProcess, getJson, restNodeArgs, tempDataDir, waitFor} from "./nodeProcess.ts";

const SECONDS_PER_SLOT = 1;

/**
 * A dev chain whose payloads go over the Engine API to `beacon-gateway mock-engine`, a separate
 * process, with JWT: the engine injects an INVALID payload (refused at import), a SYNCING one
 * (imported optimistically, then found INVALID and invalidated), and goes away for a while (el_offline).
 */
describe("dev chain through the HTTP engine", () => {
  const data = tempDataDir("httpengine");
  const jwtFile = join(data.dir, "jwt.hex");
  let engine: NodeProcess;
  let enginePort: number;
  let node: NodeProcess;
  let url: string;

  function startEngine(port: number): NodeProcess {
    return new NodeProcess(["mock-engine", "--port", String(port), "--jwt-secret", jwtFile]);
  }

  /** An admin call to the mock engine (JSON-RPC, with a JWT like every Engine API call). */
  async function engineCall(method: string, params: unknown[]): Promise<any> {
    const res = await fetch(`http://127.0.0.1:${enginePort}`, {
      method: "POST",
      headers: {"content-type": "application/json", authorization: `Bearer ${createJwt(loadOrCreateJwtSecret(jwtFile), Date.now() / 1000)}`},
      body: JSON.stringify({jsonrpc: "2.0", id: 1, method, params}),
    });
    const body = (await res.json()) as {result?: any; error?: unknown};
    if (body.error) throw new Error(JSON.stringify(body.error));
    return body.result;
  }

  async function headPayload(): Promise<{slot: number; blockNumber: number; blockHash: string}> {
    const {body} = await getJson(url, "/eth/v2/beacon/blocks/head");
    const payload = body.data.message.body.execution_payload;
    return {slot: Number(body.data.message.slot), blockNumber: Number(payload.block_number), blockHash: payload.block_hash};
  }

  async function syncing(): Promise<{is_optimistic: boolean; el_offline: boolean; head_slot: string}> {
    return (await getJson(url, "/eth/v1/node/syncing")).body.data;
  }

  async function forkChoiceNodes(): Promise<Array<{block_root: string; validity: string; execution_block_hash: string}>> {
    return (await getJson(url, "/eth/v1/debug/fork_choice")).body.fork_choice_nodes;
  }

  beforeAll(async () => {
    engine = startEngine(0);
    enginePort = Number((await engine.waitForLog((l) => l.msg === "mock engine listening", 30_000, "mock engine to listen")).port);
    node = new NodeProcess(
      restNodeArgs(join(data.dir, "node"), ["--seconds-per-slot", String(SECONDS_PER_SLOT), "--execution-endpoint", `http://127.0.0.1:${enginePort}`, "--jwt-secret", jwtFile])
    );
    url = await node.restUrl();
  }, 60_000);

  afterAll(async () => {
    const exits = await Promise.all([node?.stop(), engine?.stop()]);
    data.remove();
    expect(exits[0]?.code).toBe(0);
  });

  it(
    "rejects an INVALID payload, invalidates an optimistic block found INVALID later, and rides out an engine outage",
    async () => {
      await node.waitForLog((l) => l.msg === "execution engine connected", 10_000, "the engine connection");
      const start = await waitFor("a few blocks", 30_000, async () => {
        const head = await headPayload();
        return head.blockNumber >= 2 ? head : null;
      });

      // 1. The engine answers INVALID to newPayload: the block is refused, the next proposer builds on the same parent.
      const invalidNumber = start.blockNumber + 2;
      await engineCall("mock_setPayloadStatus", [{blockNumber: "0x" + invalidNumber.toString(16), status: "INVALID"}]);
      await waitFor("the chain past the invalid payload", 15_000, async () => ((await headPayload()).blockNumber > invalidNumber ? true : null));
      const [refused] = await engineCall("mock_getImposedStatuses", []);
      expect(refused).toMatchObject({blockNumber: "0x" + invalidNumber.toString(16), status: "INVALID"});
      expect((await forkChoiceNodes()).some((n) => n.execution_block_hash === refused.blockHash)).toBe(false);
      expect(node.logs.some((l) => l.msg === "block rejected: the execution engine says its payload is invalid" && String(l.reason).includes(refused.blockHash))).toBe(true);

      // 2. SYNCING: the block is imported optimistically, and validators do not build on it.
      const optimisticNumber = (await headPayload()).blockNumber + 2;
      await engineCall("mock_setPayloadStatus", [{blockNumber: "0x" + optimisticNumber.toString(16), status: "SYNCING"}]);
      const optimisticHead = await waitFor("an optimistic head", 15_000, async () => {
        const head = await headPayload();
        return head.blockNumber === optimisticNumber && (await syncing()).is_optimistic ? head : null;
      });
      const header = await getJson(url, "/eth/v1/beacon/headers/head");
      expect(header.body.execution_optimistic).toBe(true);
      const attestation = await getJson(url, `/eth/v1/validator/attestation_data?slot=${optimisticHead.slot}&committee_index=0`);
      expect(attestation.status).toBe(503);

      // ... then INVALID: the node, asking again each slot, invalidates it and goes on from its parent.
      await engineCall("mock_setPayloadStatus", [{blockNumber: "0x" + optimisticNumber.toString(16), status: "INVALID"}]);
      await waitFor("the optimistic block invalidated", 10_000, async () =>
        (await forkChoiceNodes()).some((n) => n.execution_block_hash === optimisticHead.blockHash && n.validity === "invalid") ? true : null
      );
      await waitFor("a valid head past it", 15_000, async () => {
        const head = await headPayload();
        return head.blockNumber >= optimisticNumber && head.blockHash !== optimisticHead.blockHash && !(await syncing()).is_optimistic ? true : null;
      });

      // 3. The engine goes away: el_offline, a clear log; it comes back: the chain goes on.
      await engine.stop();
      await waitFor("el_offline", 10_000, async () => ((await syncing()).el_offline ? true : null));
      await node.waitForLog((l) => /execution engine unreachable/.test(l.msg), 5_000, "the unreachable engine's log");
      const stalledAt = Number((await syncing()).head_slot);
      engine = startEngine(enginePort);
      await node.waitForLog((l) => l.msg === "execution engine is back online", 15_000, "the engine back online");
      await waitFor("new blocks after the outage", 15_000, async () => {
        const status = await syncing();
        return !status.el_offline && Number(status.head_slot) > stalledAt ? true : null;
      });
    },
    90_000
  );
});
