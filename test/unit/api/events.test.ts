import {describe, it, expect, beforeAll, afterAll, afterEach} from "@jest/globals";
import {ForkName} from "@lodestar/params";
import {ssz} from "@lodestar/types";
import {toHex} from "@lodestar/utils";
import http from "node:http";
import type {EventEmitter} from "node:events";
import request from "supertest";
import {readFileSync} from "node:fs";
import {fileURLToPath} from "node:url";
import {parse as parseYaml} from "yaml";
import {createApiClient, httpTransport} from "../../../src/api/client.ts";
import {createValidatorBeaconApi} from "../../../src/api/validatorApi.ts";
import {eventStreamLimits} from "../../../src/api/server/eventStream.ts";
import {createApp, inProcessTransport, startRestServer, type RestServer} from "../../../src/api/server/index.ts";
import {SseParser, type SseMessage} from "../../../src/api/sse.ts";
import type {PayloadAttributesEvent} from "../../../src/chain/interface.ts";
import type {PoolEvents} from "../../../src/pools/index.ts";
import {createTestContext, type TestContext} from "./testContext.ts";

let t: TestContext;
let server: RestServer;
let pools: EventEmitter<PoolEvents>;
const defaults = {...eventStreamLimits};
const root = (byte: number): Uint8Array => new Uint8Array(32).fill(byte);
const hex = (byte: number): string => toHex(root(byte));
const ZERO_SIG = "0x" + "00".repeat(96);

beforeAll(async () => {
  t = createTestContext();
  pools = t.ctx.pools.emitter;
  server = await startRestServer({port: 0, address: "127.0.0.1"}, t.ctx);
});
afterAll(() => server.close());
afterEach(() => void Object.assign(eventStreamLimits, defaults));

/** Every listener on the node's emitters (the chain's and the pools'). */
function listenerTotal(): number {
  const count = (e: EventEmitter) => e.eventNames().reduce((n, name) => n + e.listenerCount(name), 0);
  return count(t.chain.emitter as unknown as EventEmitter) + count(pools as unknown as EventEmitter);
}

async function until(condition: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

interface StreamClient {
  res: http.IncomingMessage;
  text: string;
  messages: SseMessage[];
  closed: boolean;
  close(): void;
}

/** Opens the event stream over a real socket; `read: false` never reads the body (a stalled client). */
function openStream(query: string, read = true): Promise<StreamClient> {
  return new Promise((resolve, reject) => {
    const req = http.get({host: "127.0.0.1", port: server.port, path: `/eth/v1/events?${query}`, headers: {accept: "text/event-stream"}}, (res) => {
      const parser = new SseParser();
      const client: StreamClient = {res, text: "", messages: [], closed: false, close: () => req.destroy()};
      // a body that is never read never ends: the socket tells when the server closed the connection
      res.socket.on("close", () => (client.closed = true));
      if (read) {
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          client.text += chunk;
          client.messages.push(...parser.push(chunk));
        });
      }
      resolve(client);
    });
    req.on("error", reject);
  });
}

const payloadAttributes: PayloadAttributesEvent = {
  fork: ForkName.fulu,
  proposalSlot: 9,
  proposerIndex: 5,
  parentBlockRoot: root(1),
  parentBlockNumber: 8,
  parentBlockHash: root(2),
  payloadAttributes: {
    timestamp: 123456,
    prevRandao: root(3),
    suggestedFeeRecipient: new Uint8Array(20).fill(0xab),
    withdrawals: [{index: 5, validatorIndex: 10, address: new Uint8Array(20), amount: 15640n}],
    parentBeaconBlockRoot: root(1),
  },
};

const electraAttestation = ssz.electra.Attestation.defaultValue();
electraAttestation.data.slot = 1;
const singleAttestation = {...ssz.electra.SingleAttestation.defaultValue(), committeeIndex: 1, attesterIndex: 2};
const exit = {message: {epoch: 1, validatorIndex: 1}, signature: new Uint8Array(96)};
const attesterSlashing = ssz.electra.AttesterSlashing.defaultValue();
attesterSlashing.attestation1.attestingIndices = [0, 1];

/** For each topic: fire it on the test double's emitter, and the event data the spec says arrives. */
const cases: [string, () => void, unknown][] = [
  [
    "head",
    () => t.chain.emitter.emit("head", {slot: 10, block: root(1), state: root(2), epochTransition: false, previousDutyDependentRoot: root(3), currentDutyDependentRoot: root(4)}),
    {slot: "10", block: hex(1), state: hex(2), epoch_transition: false, previous_duty_dependent_root: hex(3), current_duty_dependent_root: hex(4), execution_optimistic: false},
  ],
  ["block", () => t.chain.emitter.emit("block", {slot: 10, block: root(1)}), {slot: "10", block: hex(1), execution_optimistic: false}],
  ["block_gossip", () => t.chain.emitter.emit("block_gossip", {slot: 10, block: root(1)}), {slot: "10", block: hex(1)}],
  ["attestation", () => pools.emit("attestation", electraAttestation), ssz.electra.Attestation.toJson(electraAttestation)],
  [
    "single_attestation",
    () => pools.emit("single_attestation", singleAttestation),
    {committee_index: "1", attester_index: "2", data: ssz.phase0.AttestationData.toJson(singleAttestation.data), signature: ZERO_SIG},
  ],
  ["voluntary_exit", () => pools.emit("voluntary_exit", exit), {message: {epoch: "1", validator_index: "1"}, signature: ZERO_SIG}],
  [
    "proposer_slashing",
    () => pools.emit("proposer_slashing", ssz.phase0.ProposerSlashing.defaultValue()),
    ssz.phase0.ProposerSlashing.toJson(ssz.phase0.ProposerSlashing.defaultValue()),
  ],
  ["attester_slashing", () => pools.emit("attester_slashing", attesterSlashing), ssz.electra.AttesterSlashing.toJson(attesterSlashing)],
  [
    "bls_to_execution_change",
    () => pools.emit("bls_to_execution_change", ssz.capella.SignedBLSToExecutionChange.defaultValue()),
    ssz.capella.SignedBLSToExecutionChange.toJson(ssz.capella.SignedBLSToExecutionChange.defaultValue()),
  ],
  [
    "finalized_checkpoint",
    () => t.chain.emitter.emit("finalized_checkpoint", {block: root(1), state: root(2), epoch: 2}),
    {block: hex(1), state: hex(2), epoch: "2", execution_optimistic: false},
  ],
  [
    "chain_reorg",
    () =>
      t.chain.emitter.emit("chain_reorg", {slot: 200, depth: 50, oldHeadBlock: root(1), newHeadBlock: root(2), oldHeadState: root(3), newHeadState: root(4), epoch: 2}),
    {slot: "200", depth: "50", old_head_block: hex(1), new_head_block: hex(2), old_head_state: hex(3), new_head_state: hex(4), epoch: "2", execution_optimistic: false},
  ],
  [
    "contribution_and_proof",
    () => pools.emit("contribution_and_proof", ssz.altair.SignedContributionAndProof.defaultValue()),
    ssz.altair.SignedContributionAndProof.toJson(ssz.altair.SignedContributionAndProof.defaultValue()),
  ],
  [
    "payload_attributes",
    () => t.chain.emitter.emit("payload_attributes", payloadAttributes),
    {
      version: "fulu",
      data: {
        proposer_index: "5",
        proposal_slot: "9",
        parent_block_number: "8",
        parent_block_root: hex(1),
        parent_block_hash: hex(2),
        payload_attributes: {
          timestamp: "123456",
          prev_randao: hex(3),
          suggested_fee_recipient: "0x" + "ab".repeat(20),
          withdrawals: [{index: "5", validator_index: "10", address: "0x" + "00".repeat(20), amount: "15640"}],
          parent_beacon_block_root: hex(1),
        },
      },
    },
  ],
  [
    "blob_sidecar",
    () => t.chain.emitter.emit("blob_sidecar", {blockRoot: root(1), index: 1, slot: 1, kzgCommitment: new Uint8Array(48).fill(0x1b), versionedHash: root(7)}),
    {block_root: hex(1), index: "1", slot: "1", kzg_commitment: "0x" + "1b".repeat(48), versioned_hash: hex(7)},
  ],
  [
    "data_column_sidecar",
    () => t.chain.emitter.emit("data_column_sidecar", {blockRoot: root(1), index: 1, slot: 1, kzgCommitments: [new Uint8Array(48).fill(0x1b)]}),
    {block_root: hex(1), index: "1", slot: "1", kzg_commitments: ["0x" + "1b".repeat(48)]},
  ],
];

/** The topics of the pinned spec's event stream (the `topics` enum of apis/eventstream/index.yaml). */
function specTopics(): string[] {
  const spec = parseYaml(readFileSync(fileURLToPath(new URL("../../../vendor/beacon-apis/apis/eventstream/index.yaml", import.meta.url)), "utf8")) as {
    get: {parameters: {name: string; schema: {items: {enum: string[]}}}[]};
  };
  return spec.get.parameters.find((p) => p.name === "topics")!.schema.items.enum;
}

describe("GET /eth/v1/events", () => {
  it("serves every topic of the spec's enum (17 in v4.0.0), each streamed by a case here but the light-client updates (streamed to a light client in test/e2e/lightClient.test.ts)", async () => {
    const topics = specTopics();
    expect(topics.length).toBeGreaterThanOrEqual(17);
    const lightClient = ["light_client_finality_update", "light_client_optimistic_update"];
    expect([...cases.map(([topic]) => topic), ...lightClient].sort()).toEqual([...topics].sort());
    const client = await openStream(`topics=${topics.join(",")}`);
    expect(client.res.statusCode).toBe(200);
    client.close();
    await until(() => listenerTotal() === 0, "the listeners to go");
  });

  it("answers 400 for an unknown topic or no topic", async () => {
    const app = createApp({}, t.ctx);
    expect((await request(app).get("/eth/v1/events?topics=weather_forecast").expect(400)).body).toEqual({code: 400, message: "Invalid topic: weather_forecast"});
    expect((await request(app).get("/eth/v1/events?topics=head,weather_forecast").expect(400)).body.message).toBe("Invalid topic: weather_forecast");
    expect((await request(app).get("/eth/v1/events").expect(400)).body).toEqual({code: 400, message: "Missing required parameter topics"});
    expect((await request(app).get("/eth/v1/events?topics=").expect(400)).body.message).toBe("Missing required parameter topics");
    expect(listenerTotal()).toBe(0);
  });

  it("streams each topic's events, in the spec's JSON shape, as they are emitted", async () => {
    const client = await openStream(`topics=${cases.map(([topic]) => topic).join(",")}`);
    expect(client.res.statusCode).toBe(200);
    expect(client.res.headers["content-type"]).toBe("text/event-stream");
    for (const [, fire] of cases) fire();
    await until(() => client.messages.length === cases.length, "every event");
    expect(client.messages.map((m) => m.event)).toEqual(cases.map(([topic]) => topic));
    for (const [i, [topic, , expected]] of cases.entries()) expect([topic, JSON.parse(client.messages[i].data)]).toEqual([topic, expected]);
    expect(JSON.parse(client.messages[3].data).committee_bits).toBeDefined();
    // the wire form: `event:` and `data:` lines, a blank line after each event
    expect(client.text).toContain(`event: block\ndata: {"slot":"10","block":"${hex(1)}","execution_optimistic":false}\n\n`);
    client.close();
    await until(() => listenerTotal() === 0, "the listeners to go");
  });

  it("sends only the topics asked for; a pre-electra attestation keeps its own shape", async () => {
    const client = await openStream("topics=attestation&topics=finalized_checkpoint");
    const phase0Attestation = ssz.phase0.Attestation.defaultValue();
    t.chain.emitter.emit("head", {slot: 1, block: root(1), state: root(2), epochTransition: false, previousDutyDependentRoot: root(3), currentDutyDependentRoot: root(4)});
    pools.emit("attestation", phase0Attestation);
    await until(() => client.messages.length === 1, "the attestation");
    expect(JSON.parse(client.messages[0].data)).toEqual(ssz.phase0.Attestation.toJson(phase0Attestation));
    expect(JSON.parse(client.messages[0].data).committee_bits).toBeUndefined();
    client.close();
    await until(() => listenerTotal() === 0, "the listeners to go");
  });

  it("removes its listeners when the client disconnects", async () => {
    const client = await openStream("topics=head,block,attestation");
    expect(listenerTotal()).toBe(3);
    client.close();
    await until(() => listenerTotal() === 0, "the listeners to go");
  });

  it("refuses event streams beyond the cap with a 429, and takes new ones once others close", async () => {
    eventStreamLimits.maxClients = 2;
    const first = await openStream("topics=head");
    const second = await openStream("topics=head");
    const third = await openStream("topics=head");
    expect([first.res.statusCode, second.res.statusCode, third.res.statusCode]).toEqual([200, 200, 429]);
    await until(() => third.text !== "", "the refusal's body");
    expect(JSON.parse(third.text)).toEqual({code: 429, message: "Too many event stream clients: 2 open (at most 2)"});
    first.close();
    await until(() => listenerTotal() === 1, "the first stream's listener to go");
    const fourth = await openStream("topics=head");
    expect(fourth.res.statusCode).toBe(200);
    second.close();
    fourth.close();
    await until(() => listenerTotal() === 0, "the listeners to go");
  });

  it("sends keep-alive comment lines while idle", async () => {
    eventStreamLimits.keepAliveMs = 20;
    const client = await openStream("topics=head");
    await until(() => client.text.includes(": keep-alive\n\n"), "a keep-alive line");
    expect(client.messages).toEqual([]);
    client.close();
    await until(() => listenerTotal() === 0, "the listeners to go");
  });

  it("drops a client that never reads once its queue is full, and removes its listeners", async () => {
    eventStreamLimits.maxQueuedChars = 64 * 1024;
    const client = await openStream("topics=attestation,block", false);
    expect(listenerTotal()).toBe(2);
    // socket buffers take the first megabytes; then the queue fills and the node lets the client go
    for (let batch = 0; batch < 5000 && listenerTotal() > 0; batch++) {
      for (let i = 0; i < 100; i++) pools.emit("attestation", electraAttestation);
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(listenerTotal()).toBe(0);
    // reading again, the client finds the connection closed by the node
    client.res.resume();
    await until(() => client.closed, "the connection to close");
  });

  it.each(["in-process", "http"])("the %s client reads the events as an async iterable; stopping it ends the subscription", async (kind) => {
    const transport = kind === "http" ? httpTransport(`http://127.0.0.1:${server.port}`) : inProcessTransport(t.ctx);
    const api = createApiClient(transport);
    const {data: events} = await api.request("eventstream", {topics: ["block", "payload_attributes"]});
    await until(() => listenerTotal() === 2, "the subscription");
    t.chain.emitter.emit("block", {slot: 3, block: root(7)});
    t.chain.emitter.emit("payload_attributes", payloadAttributes);
    const received = [];
    for await (const event of events) {
      received.push(event);
      if (received.length === 2) break;
    }
    expect(received[0]).toEqual({topic: "block", data: {slot: 3, block: root(7), executionOptimistic: false}});
    expect(received[1].topic).toBe("payload_attributes");
    expect(received[1].data).toMatchObject({version: "fulu", data: {proposerIndex: 5, proposalSlot: 9, parentBlockNumber: 8}});
    await until(() => listenerTotal() === 0, "the listeners to go");
    await expect(api.request("eventstream", {topics: []})).rejects.toMatchObject({status: 400});
  });

  it.each(["in-process", "http"])("the validator client's head events (%s) end when its signal aborts, while no event comes", async (kind) => {
    const transport = kind === "http" ? httpTransport(`http://127.0.0.1:${server.port}`) : inProcessTransport(t.ctx);
    const abort = new AbortController();
    const heads = await createValidatorBeaconApi(createApiClient(transport)).headEvents(abort.signal);
    await until(() => listenerTotal() === 1, "the subscription");
    const head = {slot: 9, block: root(1), state: root(2), epochTransition: false, previousDutyDependentRoot: root(3), currentDutyDependentRoot: root(4)};
    t.chain.emitter.emit("head", head);
    const received: unknown[] = [];
    // the reader waits for a second event that never comes, until the signal aborts
    const reading = (async () => {
      for await (const event of heads) received.push(event);
    })();
    await until(() => received.length === 1, "the head event");
    expect(received[0]).toMatchObject({slot: 9, previousDutyDependentRoot: root(3), currentDutyDependentRoot: root(4)});
    abort.abort();
    await reading;
    await until(() => listenerTotal() === 0, "the listeners to go");
  });
});
