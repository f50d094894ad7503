import {afterEach, describe, expect, it} from "@jest/globals";
import {createBeaconConfig} from "@lodestar/config";
import {ssz} from "@lodestar/types";
import {ApiClientError, createApiClient, httpTransport} from "../../../src/api/client.ts";
import {devChainConfig} from "../../../src/config/chainConfig.ts";
import {createValidatorClientMetrics} from "../../../src/metrics/validatorMetrics.ts";
import {BeaconNodes, currentAttemptSignal} from "../../../src/validator/beaconNodes.ts";
import {captureLog} from "./captureLog.ts";
import {FakeBeaconNode} from "./fakeBeaconNode.ts";
import {ManualClock} from "./manualDuties.ts";

/**
 * Several beacon nodes behind the validator client (src/validator/beaconNodes.ts), against fake
 * beacon nodes over real HTTP: which node duties go to, failover within a slot when a node stops
 * answering or hangs, publications to every synced node, and what is logged and counted. The
 * slot clock and the attempts' timeouts are the test's: it runs the health checks and says when
 * a timeout has passed, so nothing waits on the wall clock.
 */

/** The attempts' timeouts on a time of the test's: `advance` fires those whose time has come. */
class ManualTimeouts {
  private now = 0;
  private pending: {at: number; controller: AbortController}[] = [];

  readonly signal = (ms: number): AbortSignal => {
    const controller = new AbortController();
    this.pending.push({at: this.now + ms, controller});
    return controller.signal;
  };

  advance(ms: number): void {
    this.now += ms;
    const due = this.pending.filter((p) => p.at <= this.now);
    this.pending = this.pending.filter((p) => p.at > this.now);
    for (const p of due) p.controller.abort(new DOMException("The operation was aborted due to timeout", "TimeoutError"));
  }
}

const ROOT = new Uint8Array(32).fill(0x42);
const SLOT_MS = 2000;
const config = createBeaconConfig(devChainConfig({secondsPerSlot: SLOT_MS / 1000, genesisFork: "bellatrix", forkEpochs: {}}), ROOT);
const message = ssz.altair.SyncCommitteeMessage.defaultValue();

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(ids = [1, 2]) {
  const fakes = ids.map((id) => new FakeBeaconNode(id, ROOT));
  for (const fake of fakes) {
    await fake.start();
    cleanups.push(() => fake.stop());
  }
  const {log, lines} = captureLog();
  const metrics = createValidatorClientMetrics(fakes.map((f) => f.url));
  const timeouts = new ManualTimeouts();
  const nodes = new BeaconNodes(
    fakes.map((f) => ({name: f.url, client: createApiClient(httpTransport(f.url, {signal: currentAttemptSignal}))})),
    log,
    metrics.beaconNodes,
    timeouts.signal
  );
  // the scheduled checks run when the test runs the clock's due tasks; most tests run them directly (as each slot would)
  const clock = new ManualClock(10);
  const metric = async (name: string, labels: Record<string, string>): Promise<number> => {
    const values = (await metrics.registry.getSingleMetric(name)!.get()).values;
    return values.find((v) => Object.entries(labels).every(([k, value]) => v.labels[k] === value))?.value ?? 0;
  };
  const answeredBy = async (): Promise<FakeBeaconNode> => {
    const root = await nodes.api.getBlockRoot("head");
    return fakes.find((f) => Buffer.from(f.headRoot).equals(root))!;
  };
  const start = () => nodes.start(config, clock);
  return {fakes, nodes, lines, metric, answeredBy, start, check: () => nodes.check(SLOT_MS), clock, timeouts};
}

/** Lets the event loop turn `n` times: what is due without the clock moving has happened by then. */
async function loopTurns(n = 5): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
}

async function waitUntil(condition: () => Promise<boolean> | boolean): Promise<void> {
  while (!(await condition())) await loopTurns(1);
}

/** A promise and whether it has settled yet. */
function watched<T>(promise: Promise<T>): {promise: Promise<T>; settled: () => boolean} {
  let settled = false;
  void promise.then(
    () => (settled = true),
    () => (settled = true)
  );
  return {promise, settled: () => settled};
}

const messages = (lines: {msg: string; fields: object}[], msg: string, node: string) => lines.filter((l) => l.msg === msg && (l.fields as {node?: string}).node === node);

describe("several beacon nodes", () => {
  it("duties go to the first synced node: one syncing, optimistic or with its execution client offline is passed over until synced", async () => {
    const {fakes, nodes, lines, metric, answeredBy, start, check} = await setup();
    const [a, b] = fakes;
    a.sync = {is_syncing: true, is_optimistic: false, el_offline: false};
    await start();
    expect(nodes.order()).toEqual([b.url, a.url]);
    expect(await answeredBy()).toBe(b);
    expect(await metric("beacon_gateway_validator_beacon_node_primary", {node: b.url})).toBe(1);
    expect(await metric("beacon_gateway_validator_beacon_node_primary", {node: a.url})).toBe(0);
    expect(await metric("beacon_gateway_validator_beacon_node_healthy", {node: a.url})).toBe(0);

    for (const sync of [{is_syncing: false, is_optimistic: true, el_offline: false}, {is_syncing: false, is_optimistic: false, el_offline: true}]) {
      a.sync = sync;
      await check();
      expect(await answeredBy()).toBe(b);
    }
    // one line for the whole time it was not synced, however many checks found it so
    expect(messages(lines, "Beacon node not synced: others go first", a.url)).toHaveLength(1);

    let recovered = 0;
    nodes.onRecovered(() => recovered++);
    a.sync = {is_syncing: false, is_optimistic: false, el_offline: false};
    await check();
    // the client sends its subscriptions and fee recipients again
    expect(recovered).toBe(1);
    expect(await answeredBy()).toBe(a);
    expect(nodes.order()).toEqual([a.url, b.url]);
    expect(messages(lines, "Beacon node synced again", a.url)).toHaveLength(1);
    expect(await metric("beacon_gateway_validator_beacon_node_primary", {node: a.url})).toBe(1);
    expect(await metric("beacon_gateway_validator_beacon_node_healthy", {node: a.url})).toBe(1);
  });

  it("a node that stops answering: the same request goes to the next node at once, logged once; taken back when a check finds it answering", async () => {
    const {fakes, nodes, lines, metric, answeredBy, start, check} = await setup();
    const [a, b] = fakes;
    await start();
    let recovered = 0;
    nodes.onRecovered(() => recovered++);
    expect(await answeredBy()).toBe(a);
    const checksOfB = b.count("/eth/v1/node/syncing");

    await a.stop();
    for (let i = 0; i < 5; i++) expect(await answeredBy()).toBe(b);
    expect(messages(lines, "Beacon node not answering: its requests go to the next node", a.url)).toEqual([
      expect.objectContaining({level: "warn", fields: expect.objectContaining({reason: "unreachable"})}),
    ]);
    expect(await metric("beacon_gateway_validator_beacon_node_request_failures_total", {node: a.url, reason: "unreachable"})).toBe(1);
    expect(await metric("beacon_gateway_validator_beacon_node_primary", {node: b.url})).toBe(1);
    // the health checks are not on the requests' path
    expect(b.count("/eth/v1/node/syncing")).toBe(checksOfB);

    await check(); // still down: no new line
    expect(messages(lines, "Beacon node not answering: its requests go to the next node", a.url)).toHaveLength(1);
    await a.start();
    await check();
    expect(messages(lines, "Beacon node answers again", a.url)).toHaveLength(1);
    expect(recovered).toBe(1);
    expect(await answeredBy()).toBe(a);
  });

  it("a node that hangs: each request goes to the next node after a quarter of a slot, and the node is set aside once a check times out too", async () => {
    const {fakes, nodes, lines, metric, answeredBy, start, check, timeouts} = await setup();
    const [a, b] = fakes;
    await start();
    a.behaviour = "hang";
    for (let i = 0; i < 2; i++) {
      const answer = watched(answeredBy());
      await waitUntil(() => a.hanging.length === i + 1);
      // the short timeout, not the long one (two slots at least): nothing before a quarter of a slot, b at once after it
      timeouts.advance(SLOT_MS / 4 - 1);
      await loopTurns();
      expect(answer.settled()).toBe(false);
      timeouts.advance(1);
      expect(await answer.promise).toBe(b);
    }
    expect(await metric("beacon_gateway_validator_beacon_node_request_failures_total", {node: a.url, reason: "timeout"})).toBe(2);
    // slow is not gone: still first, nothing logged
    expect(nodes.order()).toEqual([a.url, b.url]);
    expect(messages(lines, "Beacon node not answering: its requests go to the next node", a.url)).toHaveLength(0);

    // a check gets a slot: no answer within it sets the node aside, logged once
    const checking = watched(check());
    await waitUntil(() => a.hanging.length === 3);
    timeouts.advance(SLOT_MS - 1);
    await loopTurns();
    expect(checking.settled()).toBe(false);
    expect(nodes.order()).toEqual([a.url, b.url]);
    timeouts.advance(1);
    await checking.promise;
    expect(nodes.order()).toEqual([b.url, a.url]);
    expect(messages(lines, "Beacon node not answering: its requests go to the next node", a.url)).toEqual([
      expect.objectContaining({level: "warn", fields: expect.objectContaining({reason: "timeout"})}),
    ]);
    // set aside, it is not asked first: b answers with no timeout passing
    expect(await answeredBy()).toBe(b);
    expect(a.hanging).toHaveLength(3);
  });

  it("the nodes are checked three quarters into each slot of the validator's clock", async () => {
    const {fakes, nodes, start, clock} = await setup();
    const [a, b] = fakes;
    await start();
    const syncing = "/eth/v1/node/syncing";
    expect([a.count(syncing), b.count(syncing)]).toEqual([1, 1]);
    expect(clock.scheduled()).toEqual([{slot: 10, offsetMs: (SLOT_MS * 3) / 4}]);
    a.sync = {is_syncing: true, is_optimistic: false, el_offline: false};
    clock.runDue();
    // the check of slot 10 ran, and the one of slot 11 is scheduled
    expect(clock.scheduled()).toEqual([{slot: 11, offsetMs: (SLOT_MS * 3) / 4}]);
    await waitUntil(() => nodes.order()[0] === b.url);
    expect([a.count(syncing), b.count(syncing)]).toEqual([2, 2]);
    // the clock set forward: the next check is in the slot it reads now, not in each slot missed
    clock.slot = 20;
    a.sync = {is_syncing: false, is_optimistic: false, el_offline: false};
    clock.runDue();
    expect(clock.scheduled()).toEqual([{slot: 21, offsetMs: (SLOT_MS * 3) / 4}]);
    await waitUntil(() => nodes.order()[0] === a.url);
    expect([a.count(syncing), b.count(syncing)]).toEqual([3, 3]);
  });

  it("an error answer goes to the next node too, without setting the node aside", async () => {
    const {fakes, nodes, metric, answeredBy, start} = await setup();
    const [a, b] = fakes;
    await start();
    a.behaviour = "error";
    expect(await answeredBy()).toBe(b);
    expect(await metric("beacon_gateway_validator_beacon_node_request_failures_total", {node: a.url, reason: "http_error"})).toBe(1);
    expect(nodes.order()).toEqual([a.url, b.url]);
    // every node failing: the error is the first node's answer
    b.behaviour = "error";
    await expect(nodes.api.getBlockRoot("head")).rejects.toMatchObject({status: 500});
  });

  it("publications go to every synced node at once and are done on the first success", async () => {
    const {fakes, nodes, metric, start, check} = await setup([1, 2, 3]);
    const [a, b, c] = fakes;
    c.sync = {is_syncing: true, is_optimistic: false, el_offline: false};
    await start();
    // a never answers: the publication is done when b has it, a's request still open
    a.behaviour = "hang";
    await nodes.api.submitSyncCommitteeMessages([message]);
    expect(a.hanging).toHaveLength(1);
    expect(a.count("/eth/v1/beacon/pool/sync_committees")).toBe(1);
    expect(b.published).toHaveLength(1);
    // not to a node that is not synced
    expect(c.count("/eth/v1/beacon/pool/sync_committees")).toBe(0);

    // a's connection dropped (a set aside), then a check finds it answering
    for (const res of a.hanging.splice(0)) res.destroy();
    await waitUntil(async () => (await metric("beacon_gateway_validator_beacon_node_request_failures_total", {node: a.url, reason: "unreachable"})) === 1);
    a.behaviour = "error";
    await check();
    await nodes.api.prepareBeaconProposer([{validatorIndex: 1, feeRecipient: new Uint8Array(20)}]);
    expect(b.published).toHaveLength(2);
    // every synced node failing: on to the others in order (c, not synced, still answers)
    b.behaviour = "error";
    await nodes.api.prepareBeaconProposer([{validatorIndex: 1, feeRecipient: new Uint8Array(20)}]);
    expect(c.published).toHaveLength(1);
    c.behaviour = "error";
    const failed = await nodes.api.prepareBeaconProposer([{validatorIndex: 1, feeRecipient: new Uint8Array(20)}]).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(ApiClientError);
    expect((failed as ApiClientError).status).toBe(500);
  });

  it("a node of another chain is never used, and said so once", async () => {
    const {fakes, nodes, lines, answeredBy, start, check} = await setup();
    const [a, b] = fakes;
    a.genesisValidatorsRoot = new Uint8Array(32).fill(0x13);
    await start();
    await check();
    expect(nodes.order()).toEqual([b.url]);
    expect(await answeredBy()).toBe(b);
    expect(messages(lines, "Beacon node is on another chain: it is not used", a.url)).toHaveLength(1);
    b.behaviour = "error";
    await expect(nodes.api.getBlockRoot("head")).rejects.toMatchObject({status: 500});
    expect(a.count("/eth/v1/beacon/blocks/head/root")).toBe(0);
  });
});
