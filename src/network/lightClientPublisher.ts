import type {ChainConfig} from "@lodestar/config";
import type {EventEmitter} from "node:events";
import type {OutgoingGossip} from "./networkContext.ts";
import type {ChainEvents} from "../chain/interface.ts";
import {syncMessageDueMs} from "./gossip/validation/lightClient.ts";

export interface LightClientPublisherDeps {
  config: Pick<ChainConfig, "SYNC_MESSAGE_DUE_BPS" | "SLOT_DURATION_MS">;
  /** the chain's emitter: its light-client events are the node's new latest updates */
  emitter: EventEmitter<ChainEvents>;
  clock: {msIntoSlot(slot: number): number};
  publish(message: OutgoingGossip): void;
}

/**
 * Publishes the node's own latest light-client updates on their gossip topics, each once the
 * block at its signature slot has had time to propagate (`get_sync_message_due_ms` into the
 * slot): peers IGNORE one that comes earlier (altair/light-client/p2p-interface.md).
 * Returns the function that stops it.
 */
export function startLightClientPublisher(deps: LightClientPublisherDeps): () => void {
  const timers = new Set<NodeJS.Timeout>();
  const later = (signatureSlot: number, message: OutgoingGossip) => {
    const waitMs = Math.max(0, syncMessageDueMs(deps.config) - deps.clock.msIntoSlot(signatureSlot));
    const timer = setTimeout(() => {
      timers.delete(timer);
      deps.publish(message);
    }, waitMs);
    timers.add(timer);
  };
  const onFinality: (...args: ChainEvents["light_client_finality_update"]) => void = ({value}) =>
    later(value.signatureSlot, {type: "light_client_finality_update", data: value});
  const onOptimistic: (...args: ChainEvents["light_client_optimistic_update"]) => void = ({value}) =>
    later(value.signatureSlot, {type: "light_client_optimistic_update", data: value});
  deps.emitter.on("light_client_finality_update", onFinality);
  deps.emitter.on("light_client_optimistic_update", onOptimistic);
  return () => {
    deps.emitter.off("light_client_finality_update", onFinality);
    deps.emitter.off("light_client_optimistic_update", onOptimistic);
    for (const timer of timers) clearTimeout(timer);
    timers.clear();
  };
}
