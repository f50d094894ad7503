import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import type {Libp2p} from "@libp2p/interface";
import {ForkName} from "@lodestar/params";
import {ssz, sszTypesFor} from "@lodestar/types";
import type {LightClientReader} from "../../../../src/chain/lightClient/server.ts";
import {lightClientBootstrap, lightClientFinalityUpdate, lightClientOptimisticUpdate, lightClientUpdatesByRange} from "../../../../src/network/lightClientProvider.ts";
import {ByteSource} from "../../../../src/network/reqresp/byteSource.ts";
import {encodePayload, readResponseChunk} from "../../../../src/network/reqresp/encoding.ts";
import {RespStatus} from "../../../../src/network/reqresp/errors.ts";
import {protocolId} from "../../../../src/network/reqresp/protocols.ts";
import type {ReqResp} from "../../../../src/network/reqresp/reqResp.ts";
import {chainHandlers, createNode, digestAtSlot, reqRespOn, statusOf, type Misbehaviour} from "./wireSetup.ts";

/**
 * The light-client protocols of altair's light-client p2p-interface.md, served by B from a
 * reader that holds one bootstrap, two period updates and a finality update: context bytes are
 * the fork digest of the (attested) header's epoch, and what B does not have is ResourceUnavailable.
 */

const KNOWN_ROOT = new Uint8Array(32).fill(7);
const bootstrap = sszTypesFor(ForkName.capella).LightClientBootstrap.defaultValue();
bootstrap.header.beacon.slot = 25;
const update = (slot: number) => {
  const u = sszTypesFor(ForkName.deneb).LightClientUpdate.defaultValue();
  u.attestedHeader.beacon.slot = slot;
  return {fork: ForkName.deneb as const, value: u};
};
const finality = sszTypesFor(ForkName.electra).LightClientFinalityUpdate.defaultValue();
finality.attestedHeader.beacon.slot = 41;
let askedUpdates: Array<[number, number]> = [];

const reader: LightClientReader = {
  getBootstrap: async (root) => (Buffer.from(root).equals(KNOWN_ROOT) ? {fork: ForkName.capella, value: bootstrap} : null),
  getUpdates: async (start, count) => {
    askedUpdates.push([start, count]);
    return [update(33), update(34)];
  },
  getFinalityUpdate: () => ({fork: ForkName.electra, value: finality}),
  getOptimisticUpdate: () => null,
};

let a: Libp2p;
let b: Libp2p;
let reqB: ReqResp;
const reports: Misbehaviour[] = [];

beforeAll(async () => {
  [a, b] = await Promise.all([createNode(), createNode()]);
  const {handlers} = chainHandlers([], statusOf(1), 1);
  reqB = reqRespOn(b, {
    ...handlers,
    onLightClientBootstrap: (_peer, root) => lightClientBootstrap(reader, root),
    onLightClientUpdatesByRange: (_peer, req) => lightClientUpdatesByRange(reader, req),
    onLightClientFinalityUpdate: () => lightClientFinalityUpdate(reader),
    onLightClientOptimisticUpdate: () => lightClientOptimisticUpdate(reader),
  }, reports);
  await reqB.start();
  await a.dial(b.getMultiaddrs()[0]);
});

afterAll(async () => {
  await reqB.stop();
  await Promise.all([a.stop(), b.stop()]);
});

/** Sends a raw request to B and reads every response chunk (all carry context bytes). */
async function request(name: string, body: Uint8Array | null) {
  const stream = await a.dialProtocol(b.peerId, protocolId(name as never, 1));
  const source = new ByteSource(stream);
  if (body) stream.send(encodePayload(body));
  await stream.close();
  const chunks = [];
  for (;;) {
    const chunk = await readResponseChunk(source, true, () => ({min: 0, max: 1 << 20}));
    if (!chunk) return chunks;
    chunks.push(chunk);
  }
}

describe("light-client req/resp", () => {
  it("light_client_bootstrap: the block's bootstrap with its header's fork digest, else ResourceUnavailable", async () => {
    const [found] = await request("light_client_bootstrap", KNOWN_ROOT);
    expect(found).toMatchObject({kind: "success", contextBytes: digestAtSlot(25)});
    expect(sszTypesFor(ForkName.capella).LightClientBootstrap.deserialize((found as {bytes: Uint8Array}).bytes).header.beacon.slot).toBe(25);
    expect(await request("light_client_bootstrap", new Uint8Array(32))).toEqual([{kind: "error", status: RespStatus.RESOURCE_UNAVAILABLE, message: "no light client bootstrap available"}]);
  });

  it("light_client_updates_by_range: one chunk per period, the count capped to MAX_REQUEST_LIGHT_CLIENT_UPDATES", async () => {
    askedUpdates = [];
    const chunks = await request("light_client_updates_by_range", ssz.altair.LightClientUpdatesByRange.serialize({startPeriod: 4, count: 1000}));
    expect(chunks).toHaveLength(2);
    for (const chunk of chunks) expect(chunk).toMatchObject({kind: "success", contextBytes: digestAtSlot(33)});
    expect(askedUpdates).toEqual([[4, 1000]]);
  });

  it("finality and optimistic updates: the latest, or ResourceUnavailable when there is none", async () => {
    const [latest] = await request("light_client_finality_update", null);
    expect(latest).toMatchObject({kind: "success", contextBytes: digestAtSlot(41)});
    expect(await request("light_client_optimistic_update", null)).toEqual([{kind: "error", status: RespStatus.RESOURCE_UNAVAILABLE, message: "no light client optimistic update available"}]);
    expect(reports).toEqual([]);
  });
});
