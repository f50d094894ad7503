import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import {ListCompositeType} from "@chainsafe/ssz";
import {getJson} from "../e2e/nodeProcess.ts";
import {ssz} from "../../node_modules/@lodestar/api/node_modules/@lodestar/types/lib/index.js";
import {PROTOCOL, hex, parseChunks, startWireSession, type Chunk, type WireSession} from "./wirePeer.ts";

/**
 * Blob sidecars on the wire, against another team's types: a chain that starts at deneb and
 * turns electra at epoch 1 (a blob in every payload) is asked blob_sidecars_by_range v1 across the
 * fork and blob_sidecars_by_root v1 over raw libp2p streams. Each chunk is taken apart without the
 * node's code (wirePeer.ts), each payload read as a BlobSidecar by @lodestar/types 1.50 (the copy
 * under @lodestar/api 1.48.0) and its context bytes checked against @lodestar/config 1.48.0's fork
 * digest of the sidecar's slot. Each must re-serialize to the bytes sent and be, as JSON, the
 * sidecar the REST API answers for its block.
 */

/** deneb slots 1 to 7, electra from slot 8 */
const RANGE = {startSlot: 1, count: 12};
const ELECTRA_SLOT = 8;
let wire: WireSession;

beforeAll(async () => {
  wire = await startWireSession("oracle-wire-blobs", "deneb", {electra: 1}, RANGE.startSlot + RANGE.count + 3);
}, 120_000);

afterAll(async () => {
  await wire?.stop();
});

/**
 * A REST read, once more on a network error: the wire requests before it may take longer than the
 * node's 5 s keep-alive, and fetch can reuse the connection the node has just closed.
 */
async function restRead(path: string) {
  return getJson(wire.view.url, path).catch(() => getJson(wire.view.url, path));
}

/** Each chunk a BlobSidecar as @lodestar/types reads it, under its slot's fork digest, that re-serializes to its bytes. */
function sidecarsOf(chunks: Chunk[]) {
  return chunks.map((chunk) => {
    expect(chunk.result).toBe(0);
    const sidecar = ssz.deneb.BlobSidecar.deserialize(chunk.payload);
    expect(ssz.deneb.BlobSidecar.serialize(sidecar)).toEqual(chunk.payload);
    const slot = sidecar.signedBlockHeader.message.slot;
    expect({slot, context: hex(chunk.context!)}).toEqual({slot, context: hex(wire.digestAt(slot))});
    return sidecar;
  });
}

describe("the node's blob sidecars on the wire, read with @lodestar/types 1.50", () => {
  it("blob_sidecars_by_range v1 across deneb and electra, and by_root v1: the sidecars the REST API answers", async () => {
    const byRange = sidecarsOf(
      await parseChunks(await wire.request(PROTOCOL("blob_sidecars_by_range", 1), ssz.deneb.BlobSidecarsByRangeRequest.serialize(RANGE)), true)
    );
    const slots = byRange.map((s) => s.signedBlockHeader.message.slot);
    // both forks answered, in slot order, one blob a block
    expect(slots.some((s) => s < ELECTRA_SLOT) && slots.some((s) => s >= ELECTRA_SLOT)).toBe(true);
    expect(hex(wire.digestAt(1))).not.toBe(hex(wire.digestAt(ELECTRA_SLOT)));
    expect(slots).toEqual([...slots].sort((a, b) => a - b));
    expect(slots.every((s) => s >= RANGE.startSlot && s < RANGE.startSlot + RANGE.count)).toBe(true);
    for (const sidecar of byRange) {
      const blockRoot = "0x" + hex(ssz.phase0.BeaconBlockHeader.hashTreeRoot(sidecar.signedBlockHeader.message));
      const answer = await restRead(`/eth/v1/beacon/blob_sidecars/${blockRoot}`);
      expect({blockRoot, status: answer.status}).toEqual({blockRoot, status: 200});
      const rest = (answer.body.data as Array<{index: string}>).find((s) => Number(s.index) === sidecar.index);
      expect(ssz.deneb.BlobSidecar.toJson(sidecar)).toEqual(rest);
    }

    // by root: the same sidecars, byte for byte
    const ids = byRange.map((s) => ({blockRoot: ssz.phase0.BeaconBlockHeader.hashTreeRoot(s.signedBlockHeader.message), index: s.index}));
    const request = new ListCompositeType(ssz.deneb.BlobIdentifier, 128).serialize(ids);
    const byRoot = sidecarsOf(await parseChunks(await wire.request(PROTOCOL("blob_sidecars_by_root", 1), request), true));
    expect(byRoot.map((s) => hex(ssz.deneb.BlobSidecar.serialize(s)))).toEqual(byRange.map((s) => hex(ssz.deneb.BlobSidecar.serialize(s))));
  }, 60_000);
});
