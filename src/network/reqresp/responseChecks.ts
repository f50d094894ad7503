import type {BeaconConfig} from "@lodestar/config";
import {ForkName} from "@lodestar/params";
import {computeEpochAtSlot} from "@lodestar/state-transition";
import {ssz, sszTypesFor, type deneb, type fulu, type SignedBeaconBlock} from "@lodestar/types";
import {maxBlobsPerBlock, type ProtocolVersion} from "./protocols.ts";
import type {ReceivedChunk} from "./requester.ts";

/**
 * Decoders of response chunks that also hold the peer to the request: objects in the requested
 * range and order, or among the requested roots; context bytes that name the fork of the
 * object's own epoch. Each returns a per-request decoder, as some checks span chunks.
 * A thrown error makes the whole response INVALID_RESPONSE.
 */

const toHex = (bytes: Uint8Array): string => Buffer.from(bytes).toString("hex");

/** The chunk's context bytes must be the fork digest of `slot`'s epoch; without them (v1) the slot must be in phase0. */
function checkContext(config: BeaconConfig, chunk: ReceivedChunk, slot: number): void {
  if (chunk.contextBytes === null) {
    if (config.getForkName(slot) !== ForkName.phase0) throw new Error(`slot ${slot} is past phase0, which a v1 response cannot carry`);
    return;
  }
  const expected = config.forkBoundary2ForkDigest(config.getForkBoundaryAtEpoch(computeEpochAtSlot(slot)));
  if (toHex(expected) !== toHex(chunk.contextBytes)) {
    throw new Error(`context bytes ${toHex(chunk.contextBytes)} are not the fork digest ${toHex(expected)} of slot ${slot}`);
  }
}

function decodeBlock(config: BeaconConfig, chunk: ReceivedChunk): SignedBeaconBlock {
  const block = sszTypesFor(chunk.fork).SignedBeaconBlock.deserialize(chunk.bytes) as SignedBeaconBlock;
  checkContext(config, chunk, block.message.slot);
  return block;
}

export function blocksByRangeDecoder(
  config: BeaconConfig,
  request: {startSlot: number; count: number; step: number}
): (chunk: ReceivedChunk, version: ProtocolVersion) => SignedBeaconBlock {
  const {startSlot, count, step} = request;
  let lastSlot = -1;
  return (chunk) => {
    const block = decodeBlock(config, chunk);
    const slot = block.message.slot;
    if (slot < startSlot || slot >= startSlot + count * step || (slot - startSlot) % step !== 0) {
      throw new Error(`block at slot ${slot} is not in the requested range`);
    }
    if (slot <= lastSlot) throw new Error(`block at slot ${slot} does not ascend from slot ${lastSlot}`);
    lastSlot = slot;
    return block;
  };
}

export function blocksByRootDecoder(config: BeaconConfig, roots: Uint8Array[]): (chunk: ReceivedChunk) => SignedBeaconBlock {
  const wanted = new Set(roots.map(toHex));
  return (chunk) => {
    const block = decodeBlock(config, chunk);
    const root = toHex(sszTypesFor(chunk.fork).BeaconBlock.hashTreeRoot(block.message as never));
    if (!wanted.delete(root)) throw new Error(`block ${root} was not requested, or came twice`);
    return block;
  };
}

/** (slot, index) must ascend strictly, within [startSlot, startSlot + count). */
function rangeOrder(startSlot: number, count: number): (slot: number, index: number) => void {
  let last: [number, number] = [-1, -1];
  return (slot, index) => {
    if (slot < startSlot || slot >= startSlot + count) throw new Error(`sidecar at slot ${slot} is not in the requested range`);
    if (slot < last[0] || (slot === last[0] && index <= last[1])) {
      throw new Error(`sidecar (${slot}, ${index}) does not ascend from (${last[0]}, ${last[1]})`);
    }
    last = [slot, index];
  };
}

export function blobSidecarsByRangeDecoder(config: BeaconConfig, request: deneb.BlobSidecarsByRangeRequest): (chunk: ReceivedChunk) => deneb.BlobSidecar {
  const order = rangeOrder(request.startSlot, request.count);
  return (chunk) => {
    const sidecar = ssz.deneb.BlobSidecar.deserialize(chunk.bytes);
    const slot = sidecar.signedBlockHeader.message.slot;
    checkContext(config, chunk, slot);
    if (sidecar.index >= maxBlobsPerBlock(config, computeEpochAtSlot(slot))) throw new Error(`blob index ${sidecar.index} too large`);
    order(slot, sidecar.index);
    return sidecar;
  };
}

export function blobSidecarsByRootDecoder(config: BeaconConfig, ids: deneb.BlobIdentifier[]): (chunk: ReceivedChunk) => deneb.BlobSidecar {
  const wanted = new Set(ids.map((id) => `${toHex(id.blockRoot)}/${id.index}`));
  return (chunk) => {
    const sidecar = ssz.deneb.BlobSidecar.deserialize(chunk.bytes);
    checkContext(config, chunk, sidecar.signedBlockHeader.message.slot);
    const key = `${toHex(ssz.phase0.BeaconBlockHeader.hashTreeRoot(sidecar.signedBlockHeader.message))}/${sidecar.index}`;
    if (!wanted.delete(key)) throw new Error(`blob sidecar ${key} was not requested, or came twice`);
    return sidecar;
  };
}

export function dataColumnSidecarsByRangeDecoder(
  config: BeaconConfig,
  request: fulu.DataColumnSidecarsByRangeRequest
): (chunk: ReceivedChunk) => fulu.DataColumnSidecar {
  const order = rangeOrder(request.startSlot, request.count);
  const columns = new Set(request.columns);
  return (chunk) => {
    const sidecar = ssz.fulu.DataColumnSidecar.deserialize(chunk.bytes);
    const slot = sidecar.signedBlockHeader.message.slot;
    checkContext(config, chunk, slot);
    if (!columns.has(sidecar.index)) throw new Error(`column ${sidecar.index} was not requested`);
    order(slot, sidecar.index);
    return sidecar;
  };
}

export function dataColumnSidecarsByRootDecoder(
  config: BeaconConfig,
  ids: fulu.DataColumnsByRootIdentifier[]
): (chunk: ReceivedChunk) => fulu.DataColumnSidecar {
  const wanted = new Set(ids.flatMap((id) => id.columns.map((c) => `${toHex(id.blockRoot)}/${c}`)));
  return (chunk) => {
    const sidecar = ssz.fulu.DataColumnSidecar.deserialize(chunk.bytes);
    checkContext(config, chunk, sidecar.signedBlockHeader.message.slot);
    const key = `${toHex(ssz.phase0.BeaconBlockHeader.hashTreeRoot(sidecar.signedBlockHeader.message))}/${sidecar.index}`;
    if (!wanted.delete(key)) throw new Error(`data column sidecar ${key} was not requested, or came twice`);
    return sidecar;
  };
}
