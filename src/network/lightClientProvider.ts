import {sszTypesFor, type LightClientBootstrap, type LightClientFinalityUpdate, type LightClientOptimisticUpdate, type LightClientUpdate, type altair} from "@lodestar/types";
import type {Forked, LightClientReader} from "../chain/lightClient/server.ts";
import type {BlockBytes} from "./blockProvider.ts";

/**
 * The light-client objects the node serves to peers (altair light-client p2p-interface.md). Each
 * goes out with the slot of its (attested) header, whose fork digest is its context bytes.
 */

function chunk<T extends {attestedHeader: {beacon: {slot: number}}}>(item: Forked<T>, typeName: "LightClientUpdate" | "LightClientFinalityUpdate" | "LightClientOptimisticUpdate"): BlockBytes {
  const type = sszTypesFor(item.fork)[typeName];
  return {slot: item.value.attestedHeader.beacon.slot, bytes: type.serialize(item.value as never)};
}

export async function* lightClientBootstrap(reader: LightClientReader, blockRoot: Uint8Array): AsyncGenerator<BlockBytes> {
  const bootstrap: Forked<LightClientBootstrap> | null = await reader.getBootstrap(blockRoot);
  if (bootstrap) yield {slot: bootstrap.value.header.beacon.slot, bytes: sszTypesFor(bootstrap.fork).LightClientBootstrap.serialize(bootstrap.value as never)};
}

export async function* lightClientUpdatesByRange(reader: LightClientReader, request: altair.LightClientUpdatesByRange): AsyncGenerator<BlockBytes> {
  const updates: Forked<LightClientUpdate>[] = await reader.getUpdates(Number(request.startPeriod), Number(request.count));
  for (const update of updates) yield chunk(update, "LightClientUpdate");
}

export async function* lightClientFinalityUpdate(reader: LightClientReader): AsyncGenerator<BlockBytes> {
  const update: Forked<LightClientFinalityUpdate> | null = reader.getFinalityUpdate();
  if (update) yield chunk(update, "LightClientFinalityUpdate");
}

export async function* lightClientOptimisticUpdate(reader: LightClientReader): AsyncGenerator<BlockBytes> {
  const update: Forked<LightClientOptimisticUpdate> | null = reader.getOptimisticUpdate();
  if (update) yield chunk(update, "LightClientOptimisticUpdate");
}
