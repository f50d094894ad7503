import {beforeAll, describe, expect, it} from "@jest/globals";
import {ENR} from "@chainsafe/enr";
import request from "supertest";
import {createApiClient} from "../../../src/api/client.ts";
import {createApp, inProcessTransport} from "../../../src/api/server/index.ts";
import {createTestContext, type TestContext} from "./testContext.ts";

/** The standard node routes about the node's identity and peers (no networking yet: no peers). */

let t: TestContext;
let app: ReturnType<typeof createApp>;

beforeAll(() => {
  t = createTestContext();
  app = createApp({}, t.ctx);
});

describe("getNetworkIdentity", () => {
  it("the node's true peer id and signed ENR, no addresses yet, and its metadata", async () => {
    const {body} = await request(app).get("/eth/v1/node/identity").expect(200);
    expect(body).toEqual({
      data: {
        peer_id: t.node.identity.peerId,
        enr: t.node.identity.enr(),
        p2p_addresses: [],
        discovery_addresses: [],
        metadata: {seq_number: "0", attnets: "0x0000000000000000", syncnets: "0x00", custody_group_count: "4"},
      },
    });
    expect(ENR.decodeTxt(body.data.enr).peerId.toString()).toBe(body.data.peer_id);
  });
});

describe("getPeers", () => {
  it("an empty list with meta.count 0, filters or not", async () => {
    expect((await request(app).get("/eth/v1/node/peers").expect(200)).body).toEqual({data: [], meta: {count: 0}});
    const filtered = await request(app).get("/eth/v1/node/peers?state=connected,disconnecting&direction=inbound").expect(200);
    expect(filtered.body).toEqual({data: [], meta: {count: 0}});
  });

  it("400 for an unknown state or direction", async () => {
    expect((await request(app).get("/eth/v1/node/peers?state=dancing").expect(400)).body).toEqual({code: 400, message: "Invalid state: dancing"});
    await request(app).get("/eth/v1/node/peers?direction=sideways").expect(400);
  });

  it("reads back through the client", async () => {
    const client = createApiClient(inProcessTransport(t.ctx));
    expect(await client.request("getPeers", {state: ["connected"], direction: []})).toEqual({data: [], meta: {count: 0}});
  });
});

describe("getPeer", () => {
  it("400 for an id that does not parse", async () => {
    expect((await request(app).get("/eth/v1/node/peers/localhost").expect(400)).body).toEqual({code: 400, message: "Invalid peer ID: localhost"});
  });

  it("404 for a valid id the node does not know, its own included", async () => {
    for (const id of ["QmYyQSo1c1Ym7orWxLYvCrM2EmxFTANf8wXmmE7DWjhx5N", "16Uiu2HAmP3d6aXVxkcgSBMDBDutJqajkiwe4pCedy47bVG8vcLF9", t.node.identity.peerId]) {
      expect((await request(app).get(`/eth/v1/node/peers/${id}`).expect(404)).body).toEqual({code: 404, message: `Peer not found: ${id}`});
    }
  });
});

describe("getPeerCount", () => {
  it("all zeros", async () => {
    expect((await request(app).get("/eth/v1/node/peer_count").expect(200)).body).toEqual({
      data: {disconnected: "0", connecting: "0", connected: "0", disconnecting: "0"},
    });
  });
});
