import {afterAll, afterEach, beforeAll, describe, expect, it} from "@jest/globals";
import {ENR} from "@chainsafe/enr";
import {ssz} from "@lodestar/types";
import {toHex} from "@lodestar/utils";
import request from "supertest";
import {createApiClient} from "../../../src/api/client.ts";
import {createApp, inProcessTransport} from "../../../src/api/server/index.ts";
import {routes} from "../../../src/api/routes/index.ts";
import type {Route} from "../../../src/api/routes/types.ts";
import {logManager, parseLogDirective, type LogDirective} from "../../../src/log.ts";
import {createTestContext, type TestContext} from "./testContext.ts";

let t: TestContext;
let app: ReturnType<typeof createApp>;
let initialGraffiti: Uint8Array;
let initialDirective: LogDirective;

/** The hex of text's UTF-8 bytes padded with zeros to 32. */
const padded = (text: string): string => toHex(Buffer.concat([Buffer.from(text), Buffer.alloc(32 - Buffer.byteLength(text))]));

beforeAll(() => {
  t = createTestContext();
  app = createApp({bodyLimit: 1024}, t.ctx);
  initialGraffiti = t.node.graffitiSetting;
  initialDirective = logManager().current();
});
afterEach(() => {
  t.node.graffitiSetting = initialGraffiti;
  t.node.syncing = false;
  t.chain.slot = 0;
});
afterAll(() => logManager().apply(initialDirective));

describe("the /ext/v1 route entries", () => {
  const ext = Object.values(routes as Record<string, Route>).filter((r) => r.tag === "Ext");

  it("live under /ext/v1, and none repeats a standard answer", () => {
    expect(ext.map((r) => r.path).every((p) => p.startsWith("/ext/v1/"))).toBe(true);
    expect(ext.map((r) => r.operationId).sort()).toEqual(
      [
        "getGraffiti", "setGraffiti", "setLogLevel", "getChainHead", "getNetworkPeerIds", "getNetworkPeers",
        "getEth1Chain", "getEth1ProposalData", "getDebugTasks", "getDebugGossipPeers",
      ].sort()
    );
    for (const gone of ["/ext/v1/node/version", "/ext/v1/node/peerid", "/ext/v1/network/enr", "/ext/v1/beacon/head", "/ext/v1/syncmanager/status"]) {
      expect(ext.map((r) => r.path)).not.toContain(gone);
    }
  });
});

describe("graffiti", () => {
  const get = async () => (await request(app).get("/ext/v1/graffiti").expect(200)).body;

  it("GET: the 32 bytes as hex, and as text", async () => {
    expect(await get()).toEqual({data: {hex: padded("node graffiti"), text: "node graffiti"}});
  });

  it("GET: text is null when the bytes are not UTF-8", async () => {
    t.node.graffitiSetting = new Uint8Array(32).fill(0xff);
    expect((await get()).data).toEqual({hex: "0x" + "ff".repeat(32), text: null});
  });

  it("POST text/plain: UTF-8 text (a final line break dropped), or 0x hex giving raw bytes", async () => {
    const post = (body: string) => request(app).post("/ext/v1/graffiti").set("Content-Type", "text/plain; charset=utf-8").send(body);
    expect((await post("gm from the dev chain ⚡\n").expect(200)).body).toEqual({data: true});
    expect((await get()).data).toEqual({hex: padded("gm from the dev chain ⚡"), text: "gm from the dev chain ⚡"});
    await post("0x" + "01".repeat(32)).expect(200);
    expect((await get()).data.hex).toBe("0x" + "01".repeat(32));
    await post("0x").expect(200);
    expect((await get()).data).toEqual({hex: "0x" + "00".repeat(32), text: ""});
  });

  it("POST application/json: a JSON string", async () => {
    await request(app).post("/ext/v1/graffiti").send(JSON.stringify("json graffiti")).set("Content-Type", "application/json").expect(200);
    expect((await get()).data.text).toBe("json graffiti");
  });

  it("POST form-encoded: the graffiti field, or the whole body as curl -d sends it", async () => {
    await request(app).post("/ext/v1/graffiti").type("form").send("graffiti=a%20field").expect(200);
    expect((await get()).data.text).toBe("a field");
    await request(app).post("/ext/v1/graffiti").type("form").send("plain words").expect(200);
    expect((await get()).data.text).toBe("plain words");
  });

  it.each([
    ["text/plain", "x".repeat(33), "Invalid request body: graffiti is 33 bytes, more than 32"],
    ["text/plain", "0x" + "00".repeat(33), "Invalid request body: graffiti is 33 bytes, more than 32"],
    ["text/plain", "0x123", 'Invalid request body: graffiti "0x123" is not valid hex (0x and pairs of hex digits)'],
    ["text/plain", "0xzz", 'Invalid request body: graffiti "0xzz" is not valid hex (0x and pairs of hex digits)'],
    ["text/plain", "", "Missing request body"],
    ["application/json", "", "Missing request body"],
    ["application/json", '""', "Invalid request body: graffiti is empty (send 0x for zero bytes)"],
    ["application/json", "42", "Invalid request body: expected a JSON string"],
    ["application/json", "{not json", "Invalid JSON body"],
  ])("POST %s %j: 400 with a message, the old value stays", async (type, body, message) => {
    const res = await request(app).post("/ext/v1/graffiti").set("Content-Type", type).send(body).expect(400);
    expect(res.body.code).toBe(400);
    expect(res.body.message).toContain(message);
    expect((await get()).data.text).toBe("node graffiti");
  });

  it("POST bytes that are not UTF-8: 400; an unknown content type: 415; too large: 413", async () => {
    const bad = await request(app).post("/ext/v1/graffiti").set("Content-Type", "text/plain").send(Buffer.from([0x66, 0xff, 0xfe])).expect(400);
    expect(bad.body).toEqual({code: 400, message: "Invalid request body: not valid UTF-8 text"});
    await request(app).post("/ext/v1/graffiti").set("Content-Type", "image/png").send(Buffer.from("x")).expect(415);
    await request(app).post("/ext/v1/graffiti").set("Content-Type", "text/plain").send("x".repeat(5000)).expect(413);
    expect((await get()).data.text).toBe("node graffiti");
  });
});

describe("chronicles settings", () => {
  afterEach(() => logManager().apply(initialDirective));

  it("takes the directive as a text/plain body", async () => {
    const directive = "DEBUG; TRACE:chain,forkchoice; REQUIRED:none; DISABLED:db";
    expect((await request(app).post("/ext/v1/chronicles/settings").set("Content-Type", "text/plain").send(directive).expect(200)).body).toEqual({data: true});
    expect(logManager().current()).toEqual(parseLogDirective(directive));
  });

  it("takes a plain level alone, and the directive as the log_level query parameter", async () => {
    await request(app).post("/ext/v1/chronicles/settings").set("Content-Type", "text/plain").send("NOTICE").expect(200);
    expect(logManager().current().level).toBe("NOTICE");
    await request(app).post("/ext/v1/chronicles/settings").query({log_level: "ERROR; DISABLED:api"}).expect(200);
    expect(logManager().current()).toEqual(parseLogDirective("ERROR; DISABLED:api"));
  });

  it.each([
    ["body", "LOUD", 'Invalid request body: unknown log level "LOUD"'],
    ["body", "INFO; REQUIRED:api; DISABLED:api", 'Invalid request body: topic "api" is both REQUIRED and DISABLED'],
    ["body", "INFO; VERBOSE:chain", 'Invalid request body: unknown section "VERBOSE"'],
    ["query", "INFO; TRACE", 'Invalid log_level: section "TRACE" has no ":"'],
    ["none", "", "Missing log-level directive"],
  ])("a malformed directive (%s %j) is a 400 with the reason and changes nothing", async (where, directive, message) => {
    const before = logManager().current();
    const req = request(app).post("/ext/v1/chronicles/settings");
    const res = await (where === "body" ? req.set("Content-Type", "text/plain").send(directive) : where === "query" ? req.query({log_level: directive}) : req).expect(400);
    expect(res.body.message).toContain(message);
    expect(logManager().current()).toBe(before);
  });

  it("the API client sends the directive either way, and a graffiti, through the same entries", async () => {
    const client = createApiClient(inProcessTransport(t.ctx));
    expect(await client.request("setLogLevel", {directive: parseLogDirective("DEBUG; TRACE:db")})).toEqual({data: true});
    expect(logManager().current()).toEqual(parseLogDirective("DEBUG; TRACE:db"));
    expect(await client.request("setLogLevel", {logLevel: parseLogDirective("WARN; REQUIRED:chain; DISABLED:api")})).toEqual({data: true});
    expect(logManager().current()).toEqual(parseLogDirective("WARN; REQUIRED:chain; DISABLED:api"));
    const graffiti = new Uint8Array(32).fill(0x61);
    expect(await client.request("setGraffiti", {graffiti})).toEqual({data: true});
    expect(await client.request("getGraffiti", {})).toEqual({data: graffiti});
  });

  it("refuses a directive given twice", async () => {
    const res = await request(app).post("/ext/v1/chronicles/settings?log_level=DEBUG").set("Content-Type", "text/plain").send("INFO").expect(400);
    expect(res.body.message).toContain("once");
  });
});

describe("chain and sync", () => {
  it("chain/head: head, justified and finalized slots and roots", async () => {
    const root = toHex(t.chain.genesisRoot);
    expect((await request(app).get("/ext/v1/chain/head").expect(200)).body).toEqual({
      data: {head_slot: "0", head_block_root: root, finalized_slot: "0", finalized_block_root: root, justified_slot: "0", justified_block_root: root},
    });
  });

  it("eth1/chain: no deposit contract on the dev chain, so no eth1 blocks", async () => {
    expect((await request(app).get("/ext/v1/eth1/chain").expect(200)).body).toEqual({data: []});
  });

  it("eth1/proposal_data: the state's eth1_data as the vote, no deposits", async () => {
    const vote = ssz.phase0.Eth1Data.toJson(t.state.eth1Data.toValue());
    expect((await request(app).get("/ext/v1/eth1/proposal_data").expect(200)).body).toEqual({data: {vote, deposits: []}});
  });
});

describe("node and network", () => {
  it("the identity the JSON-RPC getNetworkPeerId and getNetworkEnr read (/eth/v1/node/identity): the ENR signed by the peer id's key", async () => {
    const {peer_id: peerId, enr} = (await request(app).get("/eth/v1/node/identity").expect(200)).body.data;
    expect(peerId).toBe(t.node.identity.peerId);
    expect(peerId).toMatch(/^16Uiu2/);
    expect(enr).toMatch(/^enr:/);
    const record = ENR.decodeTxt(enr);
    expect(record.peerId.toString()).toBe(peerId);
    const forkId = ssz.phase0.ENRForkID.deserialize(record.kvs.get("eth2")!);
    expect(toHex(forkId.forkDigest)).toBe(toHex(t.chain.config.forkBoundary2ForkDigest(t.chain.config.getForkBoundaryAtEpoch(0))));
    expect(record.ip).toBeUndefined();
  });

  it("network/ids, network/peers and debug/gossip/peers: empty without networking", async () => {
    expect((await request(app).get("/ext/v1/network/ids").expect(200)).body).toEqual({data: []});
    expect((await request(app).get("/ext/v1/network/peers").expect(200)).body).toEqual({data: {peers: []}});
    expect((await request(app).get("/ext/v1/debug/gossip/peers").expect(200)).body).toEqual({
      data: {gossipsub: {}, mesh: {}, colocationPeers: [], peerStats: [], allPeers: []},
    });
  });
});

describe("debug/tasks", () => {
  it("lists the in-flight requests (this one included) and the resources Node keeps alive", async () => {
    const {body} = await request(app).get("/ext/v1/debug/tasks").expect(200);
    for (const task of body.data) expect(Object.keys(task)).toEqual(["id", "child_id", "procname", "filename", "line", "state"]);
    const self = body.data.find((task: {procname: string}) => task.procname === "GET /ext/v1/debug/tasks");
    expect(self).toMatchObject({child_id: "0", filename: "src/api/server/requestHooks.ts", state: "Pending"});
    expect(Number(self.id)).toBeGreaterThan(0);
    expect(Number(self.line)).toBeGreaterThan(0);
    // supertest's server listens while the request runs
    expect(body.data.some((task: {id: string; procname: string}) => task.id === "0" && task.procname === "TCPServerWrap")).toBe(true);
  });

  it("forgets a request once it is answered", async () => {
    await request(app).get("/ext/v1/chain/head").expect(200);
    const {body} = await request(app).get("/ext/v1/debug/tasks").expect(200);
    expect(body.data.filter((task: {procname: string}) => task.procname.startsWith("GET /ext/v1/chain/head"))).toEqual([]);
  });
});

describe("robustness", () => {
  it("an unknown extension path or method is a 404", async () => {
    expect((await request(app).get("/ext/v1/nothing").expect(404)).body.code).toBe(404);
    await request(app).post("/ext/v1/chain/head").expect(404);
    for (const gone of ["/ext/v1/node/version", "/ext/v1/node/peerid", "/ext/v1/network/enr", "/ext/v1/beacon/head", "/ext/v1/syncmanager/status"]) await request(app).get(gone).expect(404);
  });

  it("junk bodies and parameters on every extension POST are taken or refused, never a server error", async () => {
    const junk: [string, string | Buffer][] = [
      ["application/json", "[1,2,3]"],
      ["application/json", "null"],
      ["application/json", '{"__proto__": {"x": 1}}'],
      ["text/plain", "\u0000\u0001"],
      ["application/x-www-form-urlencoded", "%%%"],
      ["application/octet-stream", Buffer.from([1, 2, 3])],
      ["text/plain; charset=latin1", Buffer.from([0xe9])],
    ];
    const posts = Object.values(routes as Record<string, Route>).filter((r) => r.tag === "Ext" && r.method === "POST");
    for (const route of posts) {
      for (const [type, body] of junk) {
        const res = await request(app).post(route.path).query({log_level: "%"}).set("Content-Type", type).send(body);
        expect([route.path, type, res.status < 500]).toEqual([route.path, type, true]);
      }
    }
    expect((await request(app).get("/ext/v1/chain/head").expect(200)).body.data.head_slot).toBe("0");
  });
});
