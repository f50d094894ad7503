import {afterEach, beforeEach, describe, expect, it, jest} from "@jest/globals";
import {ForkName} from "@lodestar/params";
import {ssz} from "@lodestar/types";
import {EventEmitter} from "node:events";
import type {OutgoingGossip} from "../../../src/network/networkContext.ts";
import type {ChainEvents} from "../../../src/chain/interface.ts";
import {startLightClientPublisher} from "../../../src/network/lightClientPublisher.ts";

/**
 * The node's own light-client updates go out on gossip once a third of the signature slot has
 * passed (SYNC_MESSAGE_DUE_BPS 3333 of a 2000 ms slot: 666 ms), as peers ignore earlier ones.
 */
describe("light-client update publishing", () => {
  beforeEach(() => {
    jest.useFakeTimers();
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it("waits until the sync message is due in the signature slot, then publishes on the update's topic", () => {
    const emitter = new EventEmitter<ChainEvents>();
    const published: OutgoingGossip[] = [];
    let msIntoSlot = 100;
    const stop = startLightClientPublisher({
      config: {SYNC_MESSAGE_DUE_BPS: 3333, SLOT_DURATION_MS: 2000},
      emitter,
      clock: {msIntoSlot: () => msIntoSlot},
      publish: (m) => published.push(m),
    });
    const optimistic = ssz.fulu.LightClientOptimisticUpdate.defaultValue();
    optimistic.signatureSlot = 5;
    emitter.emit("light_client_optimistic_update", {fork: ForkName.fulu, value: optimistic});
    jest.advanceTimersByTime(565);
    expect(published).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(published).toEqual([{type: "light_client_optimistic_update", data: optimistic}]);

    // already past the due time: at once
    msIntoSlot = 900;
    const finality = ssz.fulu.LightClientFinalityUpdate.defaultValue();
    emitter.emit("light_client_finality_update", {fork: ForkName.fulu, value: finality});
    jest.advanceTimersByTime(0);
    expect(published.at(-1)).toEqual({type: "light_client_finality_update", data: finality});

    // stopped: pending publications are dropped, new events ignored
    msIntoSlot = 0;
    emitter.emit("light_client_optimistic_update", {fork: ForkName.fulu, value: optimistic});
    stop();
    emitter.emit("light_client_optimistic_update", {fork: ForkName.fulu, value: optimistic});
    jest.advanceTimersByTime(5000);
    expect(published).toHaveLength(2);
  });
});
