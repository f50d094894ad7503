import {describe, expect, it} from "@jest/globals";
import {TopicValidatorResult} from "@libp2p/gossipsub";
import {createBeaconConfig, createChainForkConfig, type ChainConfig} from "@lodestar/config";
import {sszTypesFor} from "@lodestar/types";
import {Counter, Histogram, Registry} from "prom-client";
import {devChainConfig} from "../../../src/config/chainConfig.ts";
import {stringifyTopic} from "../../../src/network/gossip/topics.ts";
import {GossipRouter, type GossipRouterDeps} from "../../../src/network/gossipRouter.ts";
import type {GossipSub} from "../../../src/network/libp2p.ts";
import {parseExposition, sampleValue} from "../../prometheusText.ts";

/** Gossip messages are counted by their topic's type and validation result, whatever topic a peer names. */
describe("gossip message counts", () => {
  const config = createBeaconConfig(
    createChainForkConfig(devChainConfig({secondsPerSlot: 2, genesisFork: "fulu", forkEpochs: {}}) as unknown as ChainConfig),
    new Uint8Array(32)
  );
  const boundary = config.getForkBoundaryAtEpoch(0);

  /** A router on a stand-in gossipsub: `send` delivers a message as gossipsub does, `results` are the verdicts reported back. */
  function routerWith(metrics: GossipRouterDeps["metrics"], validators: GossipRouterDeps["validators"], now?: () => number) {
    const results: string[] = [];
    const gossipsub = Object.assign(new EventTarget(), {
      subscribe: () => undefined,
      unsubscribe: () => undefined,
      reportMessageValidationResult: (_id: string, _from: string, result: string) => void results.push(result),
    });
    const router = new GossipRouter({
      now,
      gossipsub: gossipsub as unknown as GossipSub,
      config,
      currentEpoch: () => 0,
      validators,
      stateAtEpoch: () => Promise.reject(new Error("unused")),
      committeesPerSlot: () => Promise.reject(new Error("unused")),
      onParentUnknown: () => undefined,
      onRejected: () => undefined,
      metrics,
    });
    router.start();
    let id = 0;
    const send = (topic: string, data: Uint8Array) =>
      gossipsub.dispatchEvent(new CustomEvent("gossipsub:message", {detail: {msgId: `m${id++}`, msg: {topic, data}, propagationSource: {toString: () => "peer"}}}));
    return {router, results, send};
  }

  const counters = (registry: Registry) => ({
    gossipReceived: new Counter({name: "received_total", help: "h", labelNames: ["type", "result"], registers: [registry]}),
    gossipPublished: new Counter({name: "published_total", help: "h", labelNames: ["type"], registers: [registry]}),
  });

  it("labels by the topic's type and gossipsub's result; unknown topics fold into one label", async () => {
    const registry = new Registry();
    const {router, results, send} = routerWith(counters(registry), {beacon_block: async () => ({result: "ACCEPT", reason: ""})});
    for (let i = 0; i < 20; i++) send(`/eth2/00000000/made_up_${i}/ssz_snappy`, new Uint8Array(1));
    send(stringifyTopic(config, {type: "beacon_block", boundary}), new Uint8Array(3));
    await new Promise((resolve) => setImmediate(resolve));
    router.stop();

    expect(results).toEqual(Array(21).fill("reject"));
    const e = parseExposition(await registry.metrics());
    expect(sampleValue(e, "received_total", {type: "unknown", result: "reject"})).toBe(20);
    // three bytes are no SignedBeaconBlock: rejected, under its topic's type
    expect(sampleValue(e, "received_total", {type: "beacon_block", result: "reject"})).toBe(1);
    expect(new Set(e.samples.filter((s) => s.name === "received_total").map((s) => s.labels.type))).toEqual(new Set(["unknown", "beacon_block"]));
  });

  it("times each message from arrival to verdict, and counts those ignored unvalidated while 1,024 of their type are in validation", async () => {
    const registry = new Registry();
    const metrics = {
      ...counters(registry),
      gossipValidation: new Histogram({name: "validation_seconds", help: "h", labelNames: ["type"], buckets: [0.05, 600], registers: [registry]}),
      gossipOverloaded: new Counter({name: "overloaded_total", help: "h", labelNames: ["type"], registers: [registry]}),
    };
    // every block waits in validation until the gate opens
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    // the router's clock is the test's: the blocks wait in validation 100 ms of it
    let clockMs = 0;
    const {router, results, send} = routerWith(
      metrics,
      {beacon_block: async () => (await gate, {result: "ACCEPT", reason: ""}), beacon_aggregate_and_proof: async () => ({result: "ACCEPT", reason: ""})},
      () => clockMs
    );
    const topic = stringifyTopic(config, {type: "beacon_block", boundary});
    const type = sszTypesFor(boundary.fork).SignedBeaconBlock;
    const block = type.serialize(type.defaultValue());
    for (let i = 0; i < 1030; i++) send(topic, block);
    // the six past 1,024 in flight are ignored at once, without validation
    expect(results).toEqual(Array(6).fill(TopicValidatorResult.Ignore));
    // the limit is each type's: an aggregate is validated while the blocks fill theirs
    const aggregateType = sszTypesFor(boundary.fork).SignedAggregateAndProof;
    send(stringifyTopic(config, {type: "beacon_aggregate_and_proof", boundary}), aggregateType.serialize(aggregateType.defaultValue()));
    while (results.length < 7) await new Promise((resolve) => setImmediate(resolve));
    expect(results[6]).toBe(TopicValidatorResult.Accept);
    clockMs += 100;
    open();
    while (results.length < 1031) await new Promise((resolve) => setImmediate(resolve));
    router.stop();

    expect(results.filter((r) => r === TopicValidatorResult.Accept)).toHaveLength(1025);
    const e = parseExposition(await registry.metrics());
    expect(sampleValue(e, "overloaded_total", {type: "beacon_block"})).toBe(6);
    expect(sampleValue(e, "received_total", {type: "beacon_block", result: "ignore"})).toBe(6);
    // only the validated ones are timed, each from its arrival: all waited the 100 ms gate, by the router's clock
    expect(sampleValue(e, "validation_seconds_count", {type: "beacon_block"})).toBe(1024);
    expect(sampleValue(e, "validation_seconds_bucket", {type: "beacon_block", le: "0.05"})).toBe(0);
    expect(sampleValue(e, "validation_seconds_sum", {type: "beacon_block"})).toBeCloseTo(1024 * 0.1, 6);
  });
});
