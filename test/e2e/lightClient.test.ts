import {afterAll, describe, expect, it} from "@jest/globals";
import {fromHex} from "@lodestar/utils";
import {sszTypesFor} from "@lodestar/types";
import type {ForkPostAltair} from "@lodestar/params";
import {NodeProcess, getJson, tempDataDir} from "./nodeProcess.ts";
import {IrrelevantUpdate, SpecLightClient, type SpecConfig, type Versioned} from "./lightClientVerifier.ts";

const SECONDS_PER_SLOT = 1;
/**
 * Genesis this long ago: the chain starts at about slot 30 of sync-committee period 0 (64 slots on
 * the minimal preset), so period 1 comes in half a minute instead of a whole one.
 */
const GENESIS_AGO_SECONDS = 30;
const args = (dir: string, genesisTime: number) => [
  ...["node", "--rest", "--rest-port", "0", "--data-dir", dir],
  ...["--seconds-per-slot", String(SECONDS_PER_SLOT), "--genesis-time", String(genesisTime)],
];

/** Reads a server-sent event stream into `events` until `stop()`. */
function openEventStream(url: string, events: {event: string; data: string}[]): {stop(): void} {
  const controller = new AbortController();
  void (async () => {
    const res = await fetch(url, {headers: {accept: "text/event-stream"}, signal: controller.signal});
    const decoder = new TextDecoder();
    let buffer = "";
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, {stream: true});
      let end: number;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event = /^event: ?(.*)$/m.exec(block)?.[1];
        const data = /^data: ?(.*)$/m.exec(block)?.[1];
        if (event && data) events.push({event, data});
      }
    }
  })().catch(() => undefined);
  return {stop: () => controller.abort()};
}

/**
 * A light client written from the spec follows a live dev node over HTTP: from the bootstrap of
 * the finalized checkpoint (genesis at first), through the best update of period 0 (which gives
 * it the next sync committee), finality and optimistic updates polled and pushed by SSE, into
 * sync-committee period 1, where the signatures come from the committee it learnt. Every object
 * it receives must pass `validate_light_client_update`. Then the node restarts and still serves
 * period 0's update and the bootstrap it had.
 */
describe("light-client server, followed by a spec light client", () => {
  const data = tempDataDir("lightclient");
  const nodes: NodeProcess[] = [];
  const streams: {stop(): void}[] = [];
  afterAll(async () => {
    for (const s of streams) s.stop();
    for (const node of nodes) await node.stop("SIGKILL");
    data.remove();
  });

  it(
    "from a bootstrap to the head of period 1, every update verified; period 0's best update survives a restart",
    async () => {
      const genesisTime = Math.floor(Date.now() / 1000) - GENESIS_AGO_SECONDS;
      const node = new NodeProcess(args(data.dir, genesisTime));
      nodes.push(node);
      const url = await node.restUrl();
      const spec = (await getJson<{data: SpecConfig}>(url, "/eth/v1/config/spec")).body.data;
      const genesis = (await getJson(url, "/eth/v1/beacon/genesis")).body.data;
      expect(Number(genesis.genesis_time)).toBe(genesisTime);
      const currentSlot = () => Math.floor((Date.now() / 1000 - genesisTime) / SECONDS_PER_SLOT);
      const client = new SpecLightClient(spec, fromHex(genesis.genesis_validators_root));

      // bad input, as the spec says
      expect((await getJson(url, `/eth/v1/beacon/light_client/bootstrap/0x${"ab".repeat(32)}`)).status).toBe(404);
      expect((await getJson(url, "/eth/v1/beacon/light_client/bootstrap/0x1234")).status).toBe(400);
      expect((await getJson(url, "/eth/v1/beacon/light_client/updates?start_period=x&count=1")).status).toBe(400);
      expect((await getJson(url, "/eth/v1/beacon/light_client/updates?start_period=0&count=-1")).status).toBe(400);
      expect((await getJson(url, "/eth/v1/beacon/light_client/updates?start_period=0&count=0")).status).toBe(400);
      expect((await getJson(url, "/eth/v1/beacon/light_client/updates?count=1")).status).toBe(400);
      expect((await getJson(url, "/eth/v1/beacon/light_client/updates?start_period=18446744073709551615&count=18446744073709551615")).body).toEqual([]);

      // the trusted root: the genesis block, the finalized checkpoint of a new chain (its state names it by the zero root)
      const finalized = {root: (await getJson(url, "/eth/v1/beacon/blocks/genesis/root")).body.data.root as string};
      const bootstrap = await getJson<Versioned>(url, `/eth/v1/beacon/light_client/bootstrap/${finalized.root}`);
      expect(bootstrap.status).toBe(200);
      client.initialize(fromHex(finalized.root), bootstrap.body);
      const bootstrapSsz = await fetch(`${url}/eth/v1/beacon/light_client/bootstrap/${finalized.root}`, {headers: {accept: "application/octet-stream"}});
      expect(bootstrapSsz.headers.get("eth-consensus-version")).toBe(bootstrap.body.version);
      const bootstrapType = sszTypesFor(bootstrap.body.version as ForkPostAltair).LightClientBootstrap;
      expect(new Uint8Array(await bootstrapSsz.arrayBuffer())).toEqual(bootstrapType.serialize(bootstrapType.fromJson(bootstrap.body.data)));

      const events: {event: string; data: string}[] = [];
      streams.push(openEventStream(`${url}/eth/v1/events?topics=light_client_finality_update,light_client_optimistic_update`, events));
      const processed = {updates: 0, finality: 0, optimistic: 0, finalityEvents: 0, optimisticEvents: 0, irrelevant: 0};
      /** Every object must verify; one older than the light client's finalized header is only ignored. */
      const feed = (kind: Exclude<keyof typeof processed, "irrelevant">, process: () => void) => {
        try {
          process();
          processed[kind]++;
        } catch (e) {
          if (!(e instanceof IrrelevantUpdate)) throw e;
          processed.irrelevant++;
        }
      };
      const periodOf = client.periodAt;
      const deadline = Date.now() + 150_000;
      let eventsSeen = 0;
      for (;;) {
        const store = client.store;
        const finalizedPeriod = periodOf(store.finalizedHeader.beacon.slot);
        const done = periodOf(store.optimisticHeader.beacon.slot) >= 1 && store.finalizedHeader.beacon.slot > 0 && processed.finalityEvents > 0 && processed.optimisticEvents > 0;
        if (done || Date.now() > deadline) break;
        // sync strategy of light-client.md: the period's update while the next committee is unknown
        if (!client.isNextSyncCommitteeKnown() && finalizedPeriod === periodOf(store.optimisticHeader.beacon.slot)) {
          const range = await getJson<Versioned[]>(url, `/eth/v1/beacon/light_client/updates?start_period=${finalizedPeriod}&count=1`);
          expect(range.status).toBe(200);
          for (const update of range.body) feed("updates", () => client.processUpdateJson(update, currentSlot()));
        }
        for (; eventsSeen < events.length; eventsSeen++) {
          const {event, data} = events[eventsSeen];
          if (event === "light_client_finality_update") feed("finalityEvents", () => client.processFinalityUpdate(JSON.parse(data), currentSlot()));
          else feed("optimisticEvents", () => client.processOptimisticUpdate(JSON.parse(data), currentSlot()));
        }
        const finality = await getJson<Versioned>(url, "/eth/v1/beacon/light_client/finality_update");
        if (finality.status === 200) feed("finality", () => client.processFinalityUpdate(finality.body, currentSlot()));
        else expect(finality.status).toBe(404);
        const optimistic = await getJson<Versioned>(url, "/eth/v1/beacon/light_client/optimistic_update");
        if (optimistic.status === 200) feed("optimistic", () => client.processOptimisticUpdate(optimistic.body, currentSlot()));
        else expect(optimistic.status).toBe(404);
        await new Promise((r) => setTimeout(r, 500));
      }
      const store = client.store;
      expect({optimisticPeriod: periodOf(store.optimisticHeader.beacon.slot), finalizedPastGenesis: store.finalizedHeader.beacon.slot > 0}).toEqual({optimisticPeriod: 1, finalizedPastGenesis: true});
      expect(processed.updates).toBeGreaterThan(0);
      // only the first seconds' updates (attesting genesis, the bootstrap's own header) are old news
      expect(processed.irrelevant).toBeLessThan(processed.optimistic + processed.optimisticEvents);
      expect(processed.finalityEvents).toBeGreaterThan(0);
      expect(processed.optimisticEvents).toBeGreaterThan(0);
      // the light client is near the head: its optimistic header is at most a few slots behind
      const headSlot = Number((await getJson(url, "/eth/v1/beacon/headers/head")).body.data.header.message.slot);
      expect(headSlot - store.optimisticHeader.beacon.slot).toBeLessThanOrEqual(3);

      // period 0 is over: its best update is final, and its SSZ form is the same update
      const period0 = (await getJson<Versioned[]>(url, "/eth/v1/beacon/light_client/updates?start_period=0&count=2")).body;
      expect(period0.length).toBeGreaterThanOrEqual(1);
      const sszRange = new Uint8Array(await (await fetch(`${url}/eth/v1/beacon/light_client/updates?start_period=0&count=1`, {headers: {accept: "application/octet-stream"}})).arrayBuffer());
      const updateType = sszTypesFor(period0[0].version as ForkPostAltair).LightClientUpdate;
      const payload = updateType.serialize(updateType.fromJson(period0[0].data));
      expect(Number(Buffer.from(sszRange).readBigUInt64LE(0))).toBe(4 + payload.length);
      expect(sszRange.subarray(12)).toEqual(payload);
      const finalizedNow = (await getJson(url, "/eth/v1/beacon/states/head/finality_checkpoints")).body.data.finalized;
      const bootstrapNow = (await getJson(url, `/eth/v1/beacon/light_client/bootstrap/${finalizedNow.root}`)).body;
      for (const s of streams) s.stop();
      expect((await node.stop("SIGTERM")).code).toBe(0);

      const restarted = new NodeProcess(args(data.dir, genesisTime));
      nodes.push(restarted);
      const url2 = await restarted.restUrl();
      expect((await getJson(url2, "/eth/v1/beacon/light_client/updates?start_period=0&count=1")).body).toEqual([period0[0]]);
      expect((await getJson(url2, `/eth/v1/beacon/light_client/bootstrap/${finalizedNow.root}`)).body).toEqual(bootstrapNow);
      // a new light client starts from the restarted node's period 0 and verifies its update
      const fresh = new SpecLightClient(spec, fromHex(genesis.genesis_validators_root));
      fresh.initialize(fromHex(finalized.root), (await getJson<Versioned>(url2, `/eth/v1/beacon/light_client/bootstrap/${finalized.root}`)).body);
      fresh.processUpdateJson(period0[0], currentSlot());
      expect(fresh.isNextSyncCommitteeKnown()).toBe(true);
    },
    240_000
  );
});
