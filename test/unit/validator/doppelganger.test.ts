import {describe, expect, it} from "@jest/globals";
import {toHex} from "@lodestar/utils";
import {getLogger, initLogging, parseLogDirective} from "../../../src/log.ts";
import {type DoppelgangerDetection, DoppelgangerProtection} from "../../../src/validator/doppelganger.ts";
import {ValidatorIndices} from "../../../src/validator/validators.ts";
import {FakeBeaconApi, pubkeys} from "./fakeBeaconApi.ts";

/** The doppelganger rule driven epoch by epoch against a stand-in beacon node's liveness answers. */
describe("doppelganger protection", () => {
  async function setup() {
    initLogging({directive: parseLogDirective("FATAL"), format: "json"});
    const api = new FakeBeaconApi("electra", 0);
    const validators = new ValidatorIndices([pubkeys[2], pubkeys[3]]);
    await validators.resolve(api);
    const detections: DoppelgangerDetection[] = [];
    const dg = new DoppelgangerProtection(api, validators, getLogger("validator"), (d) => detections.push(d));
    for (const pk of [pubkeys[2], pubkeys[3]]) dg.register(toHex(pk), 10);
    return {api, validators, dg, detections};
  }

  it("a key added in epoch 10 performs no duty until epochs 11 and 12 were seen idle: it signs from epoch 13", async () => {
    const {api, validators, dg, detections} = await setup();
    for (const epoch of [10, 11, 12]) {
      await dg.onEpoch(epoch);
      expect(validators.owns(pubkeys[2], 2)).toBe(false);
    }
    const generation = validators.generation;
    await dg.onEpoch(13);
    expect(validators.owns(pubkeys[2], 2) && validators.owns(pubkeys[3], 3)).toBe(true);
    // the released keys' duties are fetched again: they were left out of those fetched while held
    expect(validators.generation).toBeGreaterThan(generation);
    expect(detections).toEqual([]);
    // the liveness of epochs 10 (the partial one, for an early warning), 11 and 12 was asked
    expect(api.livenessQueries.map((q) => q.epoch)).toEqual([10, 11, 12]);
    expect(api.livenessQueries[0].indices.sort()).toEqual([2, 3]);
  });

  it("a key seen live names its index and is never released; an unanswered epoch does not count", async () => {
    const {api, validators, dg, detections} = await setup();
    await dg.onEpoch(11);
    const failing = api.getLiveness.bind(api);
    api.getLiveness = async () => {
      throw new Error("node down");
    };
    await dg.onEpoch(12);
    api.getLiveness = failing;
    await dg.onEpoch(13);
    // epoch 12's answer failed: only epoch 11 counted so far
    expect(validators.owns(pubkeys[2], 2)).toBe(false);
    api.live.set(13, new Set([3]));
    await dg.onEpoch(14);
    expect(detections).toEqual([{pubkey: toHex(pubkeys[3]), index: 3, epoch: 13}]);
    // key 2 was idle long enough by now, but nothing is released once a doppelganger is found
    expect(validators.owns(pubkeys[3], 3) || validators.owns(pubkeys[2], 2)).toBe(false);
  });
});
