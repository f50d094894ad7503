// suite: alone (live chains on each fork whose sync committee messages must arrive in their slot)
import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import {routes} from "../../src/api/routes/index.ts";
import type {Route} from "../../src/api/routes/types.ts";
import {getJson} from "../e2e/nodeProcess.ts";
import {CALLS, NOT_CALLED, NOT_IN_LODESTAR, servedOn, type Call, type CallContext, type Entry} from "./lodestarCalls.ts";
import {routes as lodestarRoutes} from "@lodestar/api";
import {createBeaconConfig} from "../../node_modules/@lodestar/api/node_modules/@lodestar/config/lib/index.js";
import type {ForkPostAltair} from "../../node_modules/@lodestar/api/node_modules/@lodestar/params/lib/index.js";
import {sszTypesFor} from "../../node_modules/@lodestar/api/node_modules/@lodestar/types/lib/index.js";
import {FORKS, forkSeq, lodestarRouteIndex, startOracleNode, type Fork, type LodestarMethod, type OracleNode} from "./lodestarApi.ts";

/**
 * Every route of our table that @lodestar/api 1.48.0 (the registry's newest) defines, asked with
 * its client of a live node over real HTTP at each fork from phase0 to fulu (one node, forks one
 * epoch apart, each read while the head is in it: about 55 s), in JSON and, where
 * both sides allow it, SSZ: Lodestar's codecs (written from its own types) must read every answer
 * and its metadata, and where the answer depends only on the request, the JSON and the SSZ
 * answer must read back as the same value. The OpenAPI check stays in test/conformance.
 */

const allRoutes = Object.values(routes as Record<string, Route>);
/** a fork is read once the head is this many slots into it (blocks with attestations and sync aggregates) */
const SLOTS_INTO_FORK = 3;
/** the chain reaches fulu (epoch 6) at about 50 s */
const RUN_MS = 100_000;

let n: OracleNode;
/** per operationId: the forks it was asked on, and what went wrong */
const results = new Map<string, {forks: Fork[]; problems: string[]; refused: number}>();
const events: {type: string; fork: Fork | null}[] = [];
const eventProblems: string[] = [];
const abortEvents = new AbortController();

beforeAll(async () => {
  n = await startOracleNode();
  const methods = lodestarMethods();
  await subscribeToEvents();
  for (const fork of FORKS) {
    const forkStart = forkSeq(fork) * 8;
    const deadline = Date.now() + RUN_MS;
    while (n.node.chain.getHead().slot < forkStart + SLOTS_INTO_FORK && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const c = await callContext();
    if (c.fork !== fork) throw new Error(`the head (slot ${c.headSlot}) is of ${c.fork}, not ${fork}`);
    // a few routes at a time: the node keeps its slots while it answers
    const queue = Object.entries(CALLS).filter(([, entry]) => servedOn(entry, fork));
    await Promise.all(Array.from({length: 4}, async () => {
      for (let next = queue.shift(); next; next = queue.shift()) await askAll(next[0], next[1], c, methods.get(next[0]));
    }));
  }
}, RUN_MS + 30_000);

afterAll(async () => {
  abortEvents.abort();
  await n?.stop();
});

async function callContext(): Promise<CallContext> {
  const header = (await getJson(n.baseUrl, "/eth/v1/beacon/headers/head")).body.data;
  const finalized = (await getJson(n.baseUrl, "/eth/v1/beacon/states/head/finality_checkpoints")).body.data.finalized;
  const finalizedHeader = (await getJson(n.baseUrl, `/eth/v1/beacon/headers/${finalized.root === "0x" + "00".repeat(32) ? "genesis" : finalized.root}`)).body.data;
  const headSlot = Number(header.header.message.slot);
  return {
    n,
    fork: n.forkAt(headSlot),
    headSlot,
    headRoot: header.root,
    headStateRoot: header.header.message.state_root,
    finalizedEpoch: Number(finalized.epoch),
    finalizedRoot: finalizedHeader.root,
    finalizedFork: n.forkAt(Number(finalizedHeader.header.message.slot)),
    currentSlot: () => n.node.chain.currentSlot(),
  };
}

/** Every call of one route on the fork of `c`, in JSON and (where both sides allow it) SSZ. */
async function askAll(operationId: string, entry: Entry, c: CallContext, where: LodestarMethod | undefined) {
  const result = results.get(operationId) ?? {forks: [], problems: [], refused: 0};
  results.set(operationId, result);
  if (!where) return void result.problems.push(`@lodestar/api does not define it`);
  const route = (routes as Record<string, Route>)[operationId]!;
  const ourSsz = route.response.kind === "data" && route.response.data.ssz !== undefined;
  const formats = ourSsz && where.sszResponse ? (["json", "ssz"] as const) : (["json"] as const);
  try {
    const calls = await entry.calls(c);
    if (calls.length > 0) result.forks.push(c.fork);
    for (const call of calls) {
      const answers: {value?: unknown; meta?: unknown}[] = [];
      for (const format of formats) {
        let answer = await ask(where, call, format);
        if (answer.problem && call.retryOn?.test(answer.problem)) answer = await ask(where, call, format);
        const refusal = entry.refusal;
        const known = refusal && (refusal.forks ?? FORKS).includes(c.fork) && (refusal.format ?? format) === format;
        if (known) {
          if (answer.problem && refusal.error.test(answer.problem)) result.refused++;
          else result.problems.push(`${c.fork}, ${call.label}, ${format}: ${answer.problem ?? "Lodestar reads it now"} (the known refusal expected: ${refusal.error})`);
        } else if (answer.problem) result.problems.push(`${c.fork}, ${call.label}, ${format}: ${answer.problem}`);
        else answers.push(answer);
      }
      if (call.stable && answers.length === 2 && !equal(answers[0], answers[1])) {
        result.problems.push(`${c.fork}, ${call.label}: the SSZ answer reads back differently from the JSON one`);
      }
    }
  } catch (e) {
    result.problems.push(`${c.fork}: ${(e as Error).message}`);
  }
}

function equal(a: unknown, b: unknown): boolean {
  try {
    expect(b).toEqual(a);
    return true;
  } catch {
    return false;
  }
}

/** Lodestar's event client on every topic both sides know, for the whole run; the fork of each event read. */
async function subscribeToEvents() {
  const theirTopics = new Set(Object.values(lodestarRoutes.events.EventType) as string[]);
  const topics = OUR_TOPICS.filter((t) => theirTopics.has(t));
  await n.api.events.eventstream({
    topics: topics as never,
    signal: abortEvents.signal,
    onEvent: (event: {type: string; message: unknown}) => events.push({type: event.type, fork: eventFork(event.message)}),
    onError: (e: Error) => eventProblems.push(e.message),
  });
}

function eventFork(message: unknown): Fork | null {
  const m = message as {slot?: number; data?: {attestedHeader?: {beacon: {slot: number}}}};
  const slot = m.slot ?? m.data?.attestedHeader?.beacon.slot;
  return slot === undefined ? null : n.forkAt(slot);
}

/** Which @lodestar/api method serves each of our routes (same method and path), on the fulu node's config. */
function lodestarMethods() {
  const index = lodestarRouteIndex(n.config);
  return new Map(allRoutes.flatMap((r) => {
    const found = index.get(`${r.method} ${r.path}`);
    return found ? [[r.operationId, found] as const] : [];
  }));
}

describe("the route table against @lodestar/api 1.48.0", () => {
  it("asks every route Lodestar defines, or says why not; lists every route it lacks", () => {
    const methods = lodestarMethods();
    const unlisted = allRoutes
      .filter((r) => (methods.has(r.operationId) ? !(r.operationId in CALLS) && !(r.operationId in NOT_CALLED) : !(r.operationId in NOT_IN_LODESTAR)))
      .map((r) => `${r.operationId} (${r.method} ${r.path}): ${methods.has(r.operationId) ? "add a call to CALLS or a reason to NOT_CALLED" : "add a reason to NOT_IN_LODESTAR"}`);
    const stale = [
      ...Object.keys(CALLS).filter((id) => !methods.has(id)).map((id) => `CALLS.${id}: not a route both define`),
      ...Object.keys(NOT_CALLED).filter((id) => !methods.has(id)).map((id) => `NOT_CALLED.${id}: not a route both define`),
      ...Object.keys(NOT_IN_LODESTAR).filter((id) => !(id in routes) || methods.has(id)).map((id) => `NOT_IN_LODESTAR.${id}: not ours, or Lodestar defines it`),
    ];
    expect({unlisted, stale}).toEqual({unlisted: [], stale: []});
  });
});

type AnyResponse = {ok: boolean; status: number; wireFormat(): string | null; value(): unknown; meta(): unknown; errorBody(): Promise<string>};

async function ask(where: LodestarMethod, call: Call, format: "json" | "ssz"): Promise<{problem?: string; value?: unknown; meta?: unknown}> {
  const method = (n.api as unknown as Record<string, Record<string, (...params: unknown[]) => Promise<AnyResponse>>>)[where.namespace]![where.name]!;
  const init = {responseWireFormat: format};
  const args = typeof call.args === "function" ? await call.args() : call.args;
  const res = await (where.argless ? method(init) : method(args, init));
  const statuses = call.statuses ?? [200];
  if (!statuses.includes(res.status)) return {problem: `HTTP ${res.status}${res.ok ? "" : `: ${(await res.errorBody()).slice(0, 300)}`}`};
  if (!res.ok) return {};
  const wire = res.wireFormat();
  // an answer with a body comes in the format asked for, as both sides allow it
  if (wire !== null && wire !== format) return {problem: `answered in ${wire}, not ${format}`};
  try {
    return {value: res.value(), meta: res.meta()};
  } catch (e) {
    return {problem: `Lodestar cannot read the answer: ${(e as Error).message}`};
  }
}

describe("each route, on each fork from phase0 to fulu, read back by @lodestar/api 1.48.0", () => {
  for (const [operationId, entry] of Object.entries(CALLS)) {
    const route = (routes as Record<string, Route>)[operationId]!;
    it(`${operationId}: ${route.method} ${route.path}${entry.since ? ` (from ${entry.since})` : ""}`, () => {
      const result = results.get(operationId);
      expect(result?.problems).toEqual([]);
      if (entry.refusal) {
        expect(result?.refused).toBeGreaterThan(0);
        console.warn(`${operationId}: @lodestar/api 1.48.0 cannot read ${result?.refused} answer(s) the spec allows: ${entry.refusal.spec}`);
      }
      // asked on every fork that serves it (the rewards of an epoch come two epochs later)
      const served = FORKS.filter((f) => servedOn(entry, f));
      const expected = operationId === "getAttestationsRewards" ? served.slice(2) : served;
      expect(result?.forks).toEqual(expected);
    });
  }
});

describe("what Lodestar's client cannot take, read with Lodestar's own types", () => {
  it("getLightClientUpdatesByRange in SSZ: each item's fork digest and bytes, against the JSON answer", async () => {
    // the client's fork digests need the chain's genesis_validators_root: its own config gets it here
    const genesis = (await n.api.beacon.getGenesis()).value();
    const config = createBeaconConfig(n.config, genesis.genesisValidatorsRoot);
    const count = 4;
    const json = (await n.api.lightclient.getLightClientUpdatesByRange({startPeriod: 0, count}, {responseWireFormat: "json"})).value();
    const bytes = new Uint8Array(await (await fetch(`${n.baseUrl}/eth/v1/beacon/light_client/updates?start_period=0&count=${count}`, {headers: {accept: "application/octet-stream"}})).arrayBuffer());
    const updates: unknown[] = [];
    for (let offset = 0; offset < bytes.length; ) {
      const length = Number(Buffer.from(bytes.subarray(offset, offset + 8)).readBigUInt64LE(0));
      const {fork} = config.forkDigest2ForkBoundary(bytes.subarray(offset + 8, offset + 12));
      updates.push(sszTypesFor(fork as ForkPostAltair).LightClientUpdate.deserialize(bytes.subarray(offset + 12, offset + 8 + length)));
      offset += 8 + length;
    }
    expect(json.length).toBeGreaterThan(0);
    expect(updates).toEqual(json);
  });
});

/** Our event topics (the spec's, less those the node does not send yet). */
const OUR_TOPICS = ["head", "block", "block_gossip", "attestation", "single_attestation", "voluntary_exit", "proposer_slashing", "attester_slashing", "bls_to_execution_change", "finalized_checkpoint", "chain_reorg", "contribution_and_proof", "payload_attributes", "light_client_finality_update", "light_client_optimistic_update"];

describe("the event stream, read by @lodestar/api 1.48.0's event client", () => {
  it("reads every event; head, block and (from altair) optimistic updates on each fork; finality", async () => {
    const seen = (type: string) => new Set(events.filter((e) => e.type === type).map((e) => e.fork));
    const missing = () => [
      ...FORKS.filter((f) => !seen("head").has(f)).map((f) => `head on ${f}`),
      ...FORKS.filter((f) => !seen("block").has(f)).map((f) => `block on ${f}`),
      ...FORKS.slice(1).filter((f) => !seen("light_client_optimistic_update").has(f)).map((f) => `light_client_optimistic_update on ${f}`),
      ...["finalized_checkpoint", "light_client_finality_update"].filter((t) => !events.some((e) => e.type === t)),
    ];
    // the last fork's events may still be on their way (the chain goes on meanwhile)
    for (let i = 0; i < 40 && missing().length > 0; i++) await new Promise((r) => setTimeout(r, 250));
    expect(eventProblems).toEqual([]);
    expect(missing()).toEqual([]);
  }, 20_000);
});
