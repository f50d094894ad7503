import {describe, expect, it} from "@jest/globals";
import {createBeaconConfig, createChainForkConfig, type ChainConfig} from "@lodestar/config";
import {Counter, Registry} from "prom-client";
import {devChainConfig} from "../../../src/config/chainConfig.ts";
import {stringifyTopic} from "../../../src/network/gossip/topics.ts";
import {GossipRouter} from "../../../src/network/gossipRouter.ts";
import type {GossipSub} from "../../../src/network/libp2p.ts";
import {parseExposition, sampleValue} from "../../prometheusText.ts";

/** Gossip messages are counted by their topic's type and validation result, whatever topic a peer names. */
describe("gossip message counts", () => {
  const config = createBeaconConfig(
    createChainForkConfig(devChainConfig({secondsPerSlot: 2, genesisFork: "fulu", forkEpochs: {}}) as unknown as ChainConfig),
    new Uint8Array(32)
  );

  it("labels by the topic's type and gossipsub's result; unknown topics fold into one label", async () => {
    const registry = new Registry();
    const metrics = {
      gossipReceived: new Counter({name: "received_total", help: "h", labelNames: ["type", "result"], registers: [registry]}),
      gossipPublished: new Counter({name: "published_total", help: "h", labelNames: ["type"], registers: [registry]}),
    };
    const results: string[] = [];
    const gossipsub = Object.assign(new EventTarget(), {
      subscribe: () => undefined,
      unsubscribe: () => undefined,
      reportMessageValidationResult: (_id: string, _from: string, result: string) => void results.push(result),
    });
    const router = new GossipRouter({
      gossipsub: gossipsub as unknown as GossipSub,
      config,
      currentEpoch: () => 0,
      validators: {beacon_block: async () => ({result: "ACCEPT", reason: ""})},
      stateAtEpoch: () => Promise.reject(new Error("unused")),
      committeesPerSlot: () => Promise.reject(new Error("unused")),
      onParentUnknown: () => undefined,
      onRejected: () => undefined,
      metrics,
    });
    router.start();
    const boundary = config.getForkBoundaryAtEpoch(0);
    const send = (topic: string, data: Uint8Array) =>
      gossipsub.dispatchEvent(new CustomEvent("gossipsub:message", {detail: {msgId: "m", msg: {topic, data}, propagationSource: {toString: () => "peer"}}}));
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
});
