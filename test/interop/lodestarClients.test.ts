// suite: alone (Lodestar 1.5.1 answers validator routes 503 once its head is an epoch behind)
import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import {createBeaconConfig} from "@lodestar/config";
import {DOMAIN_RANDAO} from "@lodestar/params";
import {computeSigningRoot, interopSecretKey} from "@lodestar/state-transition";
import {ssz} from "@lodestar/types";
import {fromHex, toHex} from "@lodestar/utils";
import {legacyMethods, type LegacyMethod} from "../../compat/methods.ts";
import {chainConfigOfSpec} from "../../src/validator/nodeChain.ts";
import {NodeProcess, getJson, tempDataDir, waitFor, type LogLine} from "../e2e/nodeProcess.ts";
import {freePort, installLodestarPeer, LodestarProcess} from "./lodestarPeer.ts";

/**
 * Our clients in front of another implementation's beacon node, Lodestar 1.5.1 (March 2023,
 * Beacon API of its day): `beacon-gateway validator` with the 64 interop keys drives a Lodestar
 * node that runs no validators of its own (START_VALIDATORS=0, bellatrix at genesis, 2 s slots)
 * to finality, and `beacon-gateway compat --upstream` in front of that node answers each legacy
 * method as Lodestar's REST API does (the REST queries are written here by hand), or -32601
 * naming the route when Lodestar lacks it. What is asserted is what Lodestar's REST API reports.
 *
 * FINALIZED_EPOCH (env INTEROP_FINALIZED_EPOCH, default 1, about 60 s of chain; 3 in `npm run interop`) is how far the
 * validator client must finalize; `npm run interop` runs this file and the network interop.
 */

const SECONDS_PER_SLOT = 2;
const SLOTS_PER_EPOCH = 8;
const EPOCH_MS = SECONDS_PER_SLOT * SLOTS_PER_EPOCH * 1000;
const FINALIZED_EPOCH = Number(process.env.INTEROP_FINALIZED_EPOCH ?? 1);
/** Lodestar answers validator routes 503 once its head is an epoch behind: our client must start before that */
const GENESIS_DELAY = 10;
const INSTALL_TIMEOUT_MS = 6 * 60_000;

let lodestar: LodestarProcess;
let validator: NodeProcess;
let compat: NodeProcess | null = null;
const dirs: Array<{remove(): void}> = [];

function dataDir(name: string): string {
  const dir = tempDataDir(name);
  dirs.push(dir);
  return dir.dir;
}

const isError = (l: LogLine) => l.level >= 50;

beforeAll(async () => {
  await installLodestarPeer();
  lodestar = new LodestarProcess({
    restPort: await freePort(),
    p2pPort: await freePort(),
    dataDir: dataDir("lodestar"),
    env: {START_VALIDATORS: "0", FORK: "bellatrix", SECONDS_PER_SLOT: String(SECONDS_PER_SLOT), GENESIS_DELAY: String(GENESIS_DELAY)},
  });
  await Promise.race([waitFor("Lodestar's REST API", 90_000, async () => (await getJson(lodestar.restUrl, "/eth/v1/node/version")).body?.data ?? null), lodestar.crashed()]);
  validator = new NodeProcess(["validator", "--beacon-node", lodestar.restUrl, "--interop-indices", "0..63", "--data-dir", dataDir("vc")]);
  await validator.waitForLog((l) => l.msg === "Validator client started", 60_000, "validator client start");
}, INSTALL_TIMEOUT_MS);

afterAll(async () => {
  await Promise.all([validator?.stop("SIGKILL"), compat?.stop("SIGKILL"), lodestar?.stop()]);
  for (const dir of dirs) dir.remove();
}, 30_000);

function withOutput(e: unknown): Error {
  const ours = [...validator.logs, ...(compat?.logs ?? [])].slice(-20).map((l) => JSON.stringify(l)).join("\n");
  return new Error(`${(e as Error).message}\n--- beacon-gateway:\n${ours}\n--- Lodestar:\n${lodestar.output()}`);
}

describe("beacon-gateway validator in front of Lodestar 1.5.1", () => {
  it(
    `drives a Lodestar node without validators to finality (epoch ${FINALIZED_EPOCH}), on the older routes it serves`,
    async () => {
      try {
        const finalized = await Promise.race([
          waitFor(`finalized epoch ${FINALIZED_EPOCH}`, (FINALIZED_EPOCH + 4) * EPOCH_MS + GENESIS_DELAY * 1000, async () => {
            const epoch = Number((await getJson(lodestar.restUrl, "/eth/v1/beacon/states/head/finality_checkpoints")).body.data.finalized.epoch);
            return epoch >= FINALIZED_EPOCH ? epoch : null;
          }),
          lodestar.crashed(),
        ]);
        expect(finalized).toBeGreaterThanOrEqual(FINALIZED_EPOCH);
        // every block of the chain is ours (Lodestar runs no validators): most slots have one
        const head = Number((await getJson(lodestar.restUrl, "/eth/v1/beacon/headers/head")).body.data.header.message.slot);
        let blocks = 0;
        for (let slot = 1; slot <= head; slot++) if ((await getJson(lodestar.restUrl, `/eth/v1/beacon/headers/${slot}`)).status === 200) blocks++;
        expect(blocks).toBeGreaterThan(head * 0.75);
        // the genesis fork version quirk is a warning; the older routes were chosen once each and logged
        expect(validator.logs.filter((l) => l.level === 40 && String(l.msg).includes("genesis fork version 0x02000001"))).toHaveLength(1);
        const fallbacks = validator.logs.filter((l) => l.msg === "Beacon node lacks a route: using the older one").map((l) => `${l.lacking} -> ${l.using}`);
        expect(fallbacks.sort()).toEqual(
          [
            "GET /eth/v2/validator/aggregate_attestation -> GET /eth/v1/validator/aggregate_attestation",
            "GET /eth/v3/validator/blocks/{slot} -> GET /eth/v2/validator/blocks/{slot}",
            "POST /eth/v1/beacon/states/{state_id}/validators -> GET /eth/v1/beacon/states/{state_id}/validators",
            "POST /eth/v2/beacon/blocks -> POST /eth/v1/beacon/blocks",
            "POST /eth/v2/beacon/pool/attestations -> POST /eth/v1/beacon/pool/attestations",
            "POST /eth/v2/validator/aggregate_and_proofs -> POST /eth/v1/validator/aggregate_and_proofs",
          ].sort()
        );
        expect(validator.logs.filter(isError)).toEqual([]);
      } catch (e) {
        throw withOutput(e);
      }
    },
    (FINALIZED_EPOCH + 6) * EPOCH_MS + GENESIS_DELAY * 1000
  );
});

/** A legacy call and the same query written against REST; `result` picks the legacy result from the REST body. */
interface ParityCase {
  params: unknown[];
  method: "GET" | "POST";
  path: string;
  body?: unknown;
  result?: (body: any, status: number) => unknown;
}

/** The pinned values the cases ask about: the finalized checkpoint's slot and epoch, a key, Lodestar's peer id, that slot's block, header and attestation data. */
interface Pinned {
  slot: number;
  epoch: number;
  pubkey: string;
  peerId: string;
  block: unknown;
  header: unknown;
  attestationData: unknown;
  /** the next slot, and its proposer's RANDAO reveal (interop key, the chain's domain) */
  nextSlot: number;
  randao: string;
}

const BAD_SIGNATURE = "0x" + "99".repeat(96);

const get = (path: string, result?: ParityCase["result"]) => ({method: "GET" as const, path, result});

function parityCases(p: Pinned): Record<string, ParityCase> {
  const attestation = {aggregation_bits: "0x03", data: p.attestationData, signature: BAD_SIGNATURE};
  const indexed = {attesting_indices: ["0"], data: p.attestationData, signature: BAD_SIGNATURE};
  const proof = {message: {aggregator_index: "1", aggregate: attestation, selection_proof: BAD_SIGNATURE}, signature: BAD_SIGNATURE};
  const exit = {message: {epoch: "0", validator_index: "5"}, signature: BAD_SIGNATURE};
  const subscription = {validator_index: "1", committee_index: "0", committees_at_slot: "1", slot: String(p.slot + 1000), is_aggregator: false};
  const post = (path: string, body: unknown, result: ParityCase["result"] = () => true) => ({method: "POST" as const, path, body, result});
  return {
    // writes that change nothing: a known block again, no-slashings, an exit with a bad signature, a subscription
    post_v1_beacon_blocks: {params: [p.block], ...post("/eth/v1/beacon/blocks", p.block, (_b, status) => status)},
    post_v1_beacon_pool_proposer_slashings: {params: [{signed_header_1: p.header, signed_header_2: p.header}], ...post("/eth/v1/beacon/pool/proposer_slashings", {signed_header_1: p.header, signed_header_2: p.header})},
    post_v1_beacon_pool_voluntary_exits: {params: [exit], ...post("/eth/v1/beacon/pool/voluntary_exits", exit)},
    post_v1_validator_beacon_committee_subscriptions: {params: [[subscription]], ...post("/eth/v1/validator/beacon_committee_subscriptions", [subscription])},
    // v2 routes Lodestar 1.5.1 lacks: only their params matter (compat answers -32601)
    post_v1_beacon_pool_attestations: {params: [attestation], ...post("/eth/v2/beacon/pool/attestations", [attestation])},
    post_v1_beacon_pool_attester_slashings: {params: [{attestation_1: indexed, attestation_2: indexed}], ...post("/eth/v2/beacon/pool/attester_slashings", {})},
    post_v1_validator_aggregate_and_proofs: {params: [proof], ...post("/eth/v2/validator/aggregate_and_proofs", [proof])},
    get_v1_validator_aggregate_attestation: {params: [p.slot, "0x" + "00".repeat(32)], ...get("/eth/v2/validator/aggregate_attestation")},
    setLogLevel: {params: ["WARN"], ...post("/ext/v1/chronicles/settings", "WARN")},
    setGraffiti: {params: ["interop"], ...post("/ext/v1/graffiti", "interop")},

    get_v1_beacon_genesis: {params: [], ...get("/eth/v1/beacon/genesis")},
    get_v1_beacon_states_root: {params: ["finalized"], ...get("/eth/v1/beacon/states/finalized/root", (b) => b.data.root)},
    get_v1_beacon_states_fork: {params: ["finalized"], ...get("/eth/v1/beacon/states/finalized/fork")},
    get_v1_beacon_states_finality_checkpoints: {params: ["finalized"], ...get("/eth/v1/beacon/states/finalized/finality_checkpoints")},
    get_v1_beacon_states_stateId_validators: {params: ["finalized", [0, 1]], ...get("/eth/v1/beacon/states/finalized/validators?id=0&id=1")},
    get_v1_beacon_states_stateId_validators_validatorId: {params: ["finalized", 1], ...get("/eth/v1/beacon/states/finalized/validators/1")},
    get_v1_beacon_states_stateId_validator_balances: {params: ["finalized", [0, 1]], ...get("/eth/v1/beacon/states/finalized/validator_balances?id=0&id=1")},
    get_v1_beacon_states_stateId_committees_epoch: {
      params: ["finalized", p.epoch, 0, p.slot],
      ...get(`/eth/v1/beacon/states/finalized/committees?epoch=${p.epoch}&index=0&slot=${p.slot}`),
    },
    get_v1_beacon_headers: {params: [p.slot], ...get(`/eth/v1/beacon/headers?slot=${p.slot}`)},
    get_v1_beacon_headers_blockId: {params: [p.slot], ...get(`/eth/v1/beacon/headers/${p.slot}`)},
    get_v1_beacon_blocks_blockId: {params: [p.slot], ...get(`/eth/v2/beacon/blocks/${p.slot}`)},
    get_v1_beacon_blocks_blockId_root: {params: [p.slot], ...get(`/eth/v1/beacon/blocks/${p.slot}/root`, (b) => b.data.root)},
    get_v1_beacon_blocks_blockId_attestations: {params: [p.slot], ...get(`/eth/v2/beacon/blocks/${p.slot}/attestations`)},
    get_v1_beacon_pool_attestations: {params: [], ...get("/eth/v2/beacon/pool/attestations")},
    get_v1_beacon_pool_attester_slashings: {params: [], ...get("/eth/v2/beacon/pool/attester_slashings")},
    get_v1_beacon_pool_proposer_slashings: {params: [], ...get("/eth/v1/beacon/pool/proposer_slashings")},
    get_v1_beacon_pool_voluntary_exits: {params: [], ...get("/eth/v1/beacon/pool/voluntary_exits")},
    get_v1_node_identity: {params: [], ...get("/eth/v1/node/identity")},
    getNetworkPeerId: {params: [], ...get("/eth/v1/node/identity", (b) => b.data.peer_id)},
    getNetworkEnr: {params: [], ...get("/eth/v1/node/identity", (b) => b.data.enr)},
    get_v1_node_peers: {params: [], ...get("/eth/v1/node/peers")},
    get_v1_node_peers_peerId: {params: [p.peerId], ...get(`/eth/v1/node/peers/${p.peerId}`)},
    get_v1_node_peer_count: {params: [], ...get("/eth/v1/node/peer_count")},
    get_v1_node_version: {params: [], ...get("/eth/v1/node/version")},
    getNodeVersion: {params: [], ...get("/eth/v1/node/version", (b) => b.data.version)},
    get_v1_node_syncing: {params: [], ...get("/eth/v1/node/syncing")},
    getBeaconHead: {params: [], ...get("/eth/v1/node/syncing", (b) => b.data.head_slot)},
    getSyncing: {params: [], ...get("/eth/v1/node/syncing", (b) => b.data.is_syncing)},
    get_v1_node_health: {params: [], ...get("/eth/v1/node/health", (_b, status) => ({health: status}))},
    get_v1_validator_duties_attester: {params: [p.epoch, [p.pubkey]], method: "POST", path: `/eth/v1/validator/duties/attester/${p.epoch}`, body: ["0"]},
    get_v1_validator_duties_proposer: {params: [p.epoch], ...get(`/eth/v1/validator/duties/proposer/${p.epoch}`)},
    get_v1_validator_attestation_data: {params: [p.slot, 0], ...get(`/eth/v1/validator/attestation_data?slot=${p.slot}&committee_index=0`)},
    get_v1_validator_block: {params: [p.nextSlot, p.randao, "interop"], ...get(`/eth/v2/validator/blocks/${p.nextSlot}?randao_reveal=${p.randao}&graffiti=interop`)},
    get_v1_config_fork_schedule: {params: [], ...get("/eth/v1/config/fork_schedule")},
    get_v1_config_spec: {params: [], ...get("/eth/v1/config/spec")},
    get_v1_config_deposit_contract: {params: [], ...get("/eth/v1/config/deposit_contract")},
    get_v1_debug_beacon_states_stateId: {params: ["finalized"], ...get("/eth/v2/debug/beacon/states/finalized")},
    // the removed server's form is the v1 endpoint's: [{root, slot}]
    get_v1_debug_beacon_heads: {params: [], ...get("/eth/v2/debug/beacon/heads", (b) => b.data.map((h: any) => ({root: h.root, slot: h.slot})))},
    get_v2_debug_beacon_heads: {params: [], ...get("/eth/v2/debug/beacon/heads")},
  };
}

/** Whether Lodestar's router has the route at all: its framework answers a route it lacks with 404 "Route <METHOD>:<path> not found". */
async function lodestarServes(method: string, path: string): Promise<boolean> {
  const res = await fetch(lodestar.restUrl + path, {method, ...(method === "POST" ? {headers: {"content-type": "application/json"}, body: "[]"} : {})});
  const text = await res.text();
  return !(res.status === 404 && /^\{.*"message":"Route [A-Z]+:\S+ not found"/.test(text));
}

async function rpc(port: number, method: string, params: unknown[]): Promise<any> {
  const res = await fetch(`http://127.0.0.1:${port}/`, {method: "POST", headers: {"content-type": "application/json"}, body: JSON.stringify({jsonrpc: "2.0", id: 1, method, params})});
  return res.json();
}

/** What the REST answer says the legacy call must give: its result, or the REST error's status and message. */
async function restExpectation(c: ParityCase): Promise<{result: unknown} | {error: {status: number; message: string}}> {
  const init: RequestInit = c.body === undefined ? {method: c.method} : {method: c.method, headers: {"content-type": "application/json"}, body: JSON.stringify(c.body)};
  const res = await fetch(lodestar.restUrl + c.path, init);
  const text = await res.text();
  if (res.status >= 400) {
    // the client's rule (src/api/client.ts): a body's `message`, or the whole text when it has none
    let message = text;
    try {
      const json = JSON.parse(text);
      if (typeof json?.message === "string") message = json.message;
    } catch {
      // not JSON: the text
    }
    return {error: {status: res.status, message}};
  }
  const body = text === "" ? undefined : JSON.parse(text);
  return {result: c.result ? c.result(body, res.status) : body.data};
}

/** The RANDAO reveal of the next slot's proposer: its interop key signs the epoch in Lodestar's chain's domain. */
async function nextSlotRandao(): Promise<{nextSlot: number; randao: string}> {
  const spec = (await getJson(lodestar.restUrl, "/eth/v1/config/spec")).body.data;
  const genesis = (await getJson(lodestar.restUrl, "/eth/v1/beacon/genesis")).body.data;
  const config = createBeaconConfig(chainConfigOfSpec(spec), fromHex(genesis.genesis_validators_root));
  const head = Number((await getJson(lodestar.restUrl, "/eth/v1/beacon/headers/head")).body.data.header.message.slot);
  const nextSlot = head + 1;
  const epoch = Math.floor(nextSlot / SLOTS_PER_EPOCH);
  const duties: any[] = (await getJson(lodestar.restUrl, `/eth/v1/validator/duties/proposer/${epoch}`)).body.data;
  const proposer = Number(duties.find((d) => Number(d.slot) === nextSlot).validator_index);
  const signingRoot = computeSigningRoot(ssz.Epoch, epoch, config.getDomain(nextSlot, DOMAIN_RANDAO));
  return {nextSlot, randao: toHex(interopSecretKey(proposer).sign(signingRoot).toBytes())};
}

describe("compat --upstream in front of Lodestar 1.5.1", () => {
  let port: number;
  let cases: Record<string, ParityCase>;
  /** the legacy methods whose REST route Lodestar's router lacks */
  const lacking: LegacyMethod[] = [];
  const served: LegacyMethod[] = [];

  beforeAll(async () => {
    compat = new NodeProcess(["compat", "--upstream", lodestar.restUrl, "--rpc-port", "0", "--rpc-encoding", "rest"]);
    port = Number((await compat.waitForLog((l) => l.msg === "JSON-RPC listening", 30_000, "JSON-RPC to listen")).port);
    const checkpoint = (await getJson(lodestar.restUrl, "/eth/v1/beacon/states/head/finality_checkpoints")).body.data.finalized;
    const header = (await getJson(lodestar.restUrl, `/eth/v1/beacon/headers/${checkpoint.root}`)).body.data;
    const [first] = (await getJson(lodestar.restUrl, "/eth/v1/beacon/states/finalized/validators?id=0")).body.data;
    const slot = Number(header.header.message.slot);
    cases = parityCases({
      slot,
      epoch: Number(checkpoint.epoch),
      pubkey: first.validator.pubkey,
      peerId: (await getJson(lodestar.restUrl, "/eth/v1/node/identity")).body.data.peer_id,
      block: (await getJson(lodestar.restUrl, `/eth/v2/beacon/blocks/${slot}`)).body.data,
      header: header.header,
      attestationData: await waitFor("attestation data of the head slot", 10_000, async () => {
        const headSlot = (await getJson(lodestar.restUrl, "/eth/v1/beacon/headers/head")).body.data.header.message.slot;
        return (await getJson(lodestar.restUrl, `/eth/v1/validator/attestation_data?slot=${headSlot}&committee_index=0`)).body.data ?? null;
      }),
      ...(await nextSlotRandao()),
    });
    for (const method of legacyMethods.values()) {
      const {route} = method;
      ((await lodestarServes(route.method, route.path.replace(/\{\w+\}/g, "0"))) ? served : lacking).push(method);
    }
  }, 60_000);

  it("answers each legacy method whose route Lodestar serves as Lodestar's REST API does", async () => {
    try {
      const problems: string[] = [];
      for (const method of served) {
        const c = cases[method.name];
        if (!c) {
          problems.push(`${method.name}: Lodestar serves ${method.route.method} ${method.route.path}, and this test has no case for it`);
          continue;
        }
        let problem: string | undefined;
        // head-dependent answers (syncing, head slot, a produced block) can change between the two calls: asked again
        for (let attempt = 0; attempt < 3; attempt++) {
          const [reply, rest] = [await rpc(port, method.name, c.params), await restExpectation(c)];
          const got = reply.error ? {error: {status: reply.error.data?.status, message: reply.error.data?.message}} : {result: reply.result};
          problem = JSON.stringify(got) === JSON.stringify(rest) ? undefined : `${method.name}: compat ${JSON.stringify(got).slice(0, 200)} vs REST ${JSON.stringify(rest).slice(0, 200)}`;
          if (!problem) break;
        }
        if (problem) problems.push(problem);
      }
      expect(problems).toEqual([]);
      expect(served.length).toBeGreaterThanOrEqual(35);
      expect(compat!.logs.filter(isError)).toEqual([]);
    } catch (e) {
      throw withOutput(e);
    }
  }, 120_000);

  it("answers -32601 naming the route for each legacy method whose route Lodestar lacks", async () => {
    const problems: string[] = [];
    for (const method of lacking) {
      const {route} = method;
      const reply = await rpc(port, method.name, cases[method.name]?.params ?? []);
      if (reply.error?.code !== -32601 || !String(reply.error.message).includes(route.path)) {
        problems.push(`${method.name}: Lodestar lacks ${route.method} ${route.path}, yet compat answered ${JSON.stringify(reply).slice(0, 200)}`);
      }
    }
    expect(problems).toEqual([]);
  }, 60_000);
});
