import {toHex} from "@lodestar/utils";
import type {EventEmitter} from "node:events";
import type {ChainEvents, PayloadAttributesEvent} from "../../chain/interface.ts";
import {POOL_EVENTS, type PoolEvents} from "../../pools/index.ts";
import type {BeaconEvent, EventData, EventTopic, eventRoutes} from "../routes/events.ts";
import type {Handlers} from "../routes/types.ts";
import type {ApiContext} from "./context.ts";

/** The event stream's handler: each topic is a listener on the chain's or the pools' emitter. */

type Listen = <Events extends Record<keyof Events, unknown[]>, K extends keyof Events & string>(
  emitter: EventEmitter<Events>,
  name: K,
  listener: (...args: Events[K]) => void
) => void;

/** The chain's event in the API's shape: the fork as `version`, the fee recipient as a 0x string. */
function payloadAttributesData({fork, payloadAttributes, ...common}: PayloadAttributesEvent): EventData<"payload_attributes"> {
  const suggestedFeeRecipient = toHex(payloadAttributes.suggestedFeeRecipient);
  return {version: fork, data: {...common, payloadAttributes: {...payloadAttributes, suggestedFeeRecipient}}};
}

/** Topics whose event data is the value the pools emit, as it is. */
const POOL_TOPICS = POOL_EVENTS satisfies readonly (keyof PoolEvents & EventTopic)[];
type PoolTopic = (typeof POOL_TOPICS)[number];
const isPoolTopic = (topic: EventTopic): topic is PoolTopic => (POOL_TOPICS as readonly string[]).includes(topic);

/** Starts the listeners of one topic; each turns its emitter's value into the topic's event data. */
function listenTo(
  topic: EventTopic,
  chain: EventEmitter<ChainEvents>,
  pools: EventEmitter<PoolEvents>,
  listen: Listen,
  emit: (event: BeaconEvent) => void,
  isOptimistic: (blockRoot: Uint8Array) => boolean
): void {
  if (isPoolTopic(topic)) return listen(pools, topic, (data) => emit({topic, data} as BeaconEvent));
  switch (topic) {
    case "head":
      return listen(chain, topic, (e) => emit({topic, data: {...e, executionOptimistic: isOptimistic(e.block)}}));
    case "block":
      return listen(chain, topic, ({slot, block}) => emit({topic, data: {slot, block, executionOptimistic: isOptimistic(block)}}));
    case "block_gossip":
      return listen(chain, topic, (data) => emit({topic, data}));
    case "finalized_checkpoint":
      return listen(chain, topic, (e) => emit({topic, data: {...e, executionOptimistic: isOptimistic(e.block)}}));
    case "chain_reorg":
      return listen(chain, topic, (e) => emit({topic, data: {...e, executionOptimistic: isOptimistic(e.newHeadBlock)}}));
    case "payload_attributes":
      return listen(chain, topic, (e) => emit({topic, data: payloadAttributesData(e)}));
    case "light_client_finality_update":
      return listen(chain, topic, ({fork, value}) => emit({topic, data: {version: fork, data: value}}));
    case "light_client_optimistic_update":
      return listen(chain, topic, ({fork, value}) => emit({topic, data: {version: fork, data: value}}));
    case "blob_sidecar":
    case "data_column_sidecar":
      return listen(chain, topic, (data) => emit({topic, data} as BeaconEvent));
  }
}

export const eventHandlers: Handlers<typeof eventRoutes, ApiContext> = {
  async eventstream({topics}, {chain, pools}) {
    return {
      data: {
        subscribe(onEvent) {
          const removers: (() => void)[] = [];
          const listen: Listen = (emitter, name, listener) => {
            (emitter as EventEmitter).on(name, listener as never);
            removers.push(() => (emitter as EventEmitter).off(name, listener as never));
          };
          for (const topic of topics) listenTo(topic, chain.emitter, pools.emitter, listen, onEvent, (root) => chain.isOptimistic(root));
          return () => {
            for (const remove of removers) remove();
          };
        },
      },
    };
  },
};
