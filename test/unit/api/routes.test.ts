import {fileURLToPath} from "node:url";
import {describe, it, expect} from "@jest/globals";
import {readFileSync} from "node:fs";
import {join} from "node:path";
import {parse as parseYaml} from "yaml";
import {blockId, graffiti, list, parseGraffiti, stateId, uint, validatorId} from "../../../src/api/codecs.ts";
import {handlers, type ApiContext} from "../../../src/api/impl/index.ts";
import {mergeRoutes, routes} from "../../../src/api/routes/index.ts";
import type {nodeRoutes} from "../../../src/api/routes/node.ts";
import type {Handlers, Route} from "../../../src/api/routes/types.ts";

/** The pinned Beacon API spec, vendored. */
const SPEC_DIR = fileURLToPath(new URL("../../../vendor/beacon-apis", import.meta.url));
const all = Object.values(routes as Record<string, Route>);

/**
 * Routes the product spec keeps although the pinned Beacon API (v4.0.0) removed them:
 * v1 block publishing (full and blinded), v1 attestation pool, attester slashings, block
 * attestations and aggregation (pre-electra shapes), the v2 block production endpoint
 * (replaced by produceBlockV3) and the v1 blinded one (builder mode of early 2023 clients),
 * and the v1 debug state (phase0) and chain heads.
 */
const REMOVED_FROM_STANDARD = [
  "publishBlock",
  "publishBlindedBlock",
  "getPoolAttestations",
  "submitPoolAttestations",
  "getPoolAttesterSlashings",
  "submitPoolAttesterSlashings",
  "getBlockAttestations",
  "getAggregatedAttestation",
  "publishAggregateAndProofs",
  "produceBlockV2",
  "produceBlindedBlock",
  "getState",
  "getDebugChainHeads",
];

/** The spec's operationId for a method and path, read from the OpenAPI files (undefined when the spec has no such route). */
function specOperationId(method: string, path: string): string | undefined {
  const index = readFileSync(join(SPEC_DIR, "beacon-node-oapi.yaml"), "utf8");
  const ref = new RegExp(`^  ${path.replace(/[{}]/g, "\\$&")}:\\n    \\$ref: ["']?\\./([^"'\\n]+)`, "m").exec(index);
  if (!ref) return undefined;
  const file = readFileSync(join(SPEC_DIR, ref[1]), "utf8");
  const sections = file.split(/^\s*(get|post|put|delete):\s*$/m);
  for (let i = 1; i < sections.length; i += 2) {
    if (sections[i] !== method.toLowerCase()) continue;
    return /operationId:\s*["']?(\w+)/.exec(sections[i + 1])?.[1];
  }
  return undefined;
}

/** Every operation of the spec: `METHOD path` of each path item the index file lists. */
function specOperations(): string[] {
  const index = parseYaml(readFileSync(join(SPEC_DIR, "beacon-node-oapi.yaml"), "utf8")) as {paths: Record<string, {$ref: string}>};
  const out: string[] = [];
  for (const [path, {$ref}] of Object.entries(index.paths)) {
    const item = parseYaml(readFileSync(join(SPEC_DIR, $ref), "utf8")) as Record<string, unknown>;
    for (const method of ["get", "post", "put", "delete"]) if (method in item) out.push(`${method.toUpperCase()} ${path}`);
  }
  return out;
}

describe("the route table", () => {
  it("serves every operation of the Beacon API v4.0.0 (docs/rest-api.md), the light-client ones included", () => {
    const served = new Set(all.map((r) => `${r.method} ${r.path}`));
    const operations = specOperations();
    expect(operations.length).toBeGreaterThan(70);
    expect(operations.filter((op) => op.startsWith("GET /eth/v1/beacon/light_client/"))).toHaveLength(4);
    const missing = operations.filter((op) => !served.has(op));
    expect(missing).toEqual([]);
  });

  it("matches the OpenAPI spec by operationId, method and path (the node's own /ext routes aside)", () => {
    for (const route of all.filter((r) => r.tag !== "Ext")) {
      const specId = specOperationId(route.method, route.path);
      if (REMOVED_FROM_STANDARD.includes(route.operationId)) expect([route.operationId, specId]).toEqual([route.operationId, undefined]);
      else expect([route.method, route.path, specId]).toEqual([route.method, route.path, route.operationId]);
    }
  });

  it("names each path parameter once, as an argument read from the path, and carries the path's version", () => {
    for (const route of all) {
      const inPath = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
      const pathArgs = Object.values(route.args as Record<string, {in: string; name?: string}>)
        .filter((def) => def.in === "path")
        .map((def) => def.name)
        .sort();
      expect([route.operationId, pathArgs]).toEqual([route.operationId, inPath]);
      expect(route.path.startsWith(`/${route.tag === "Ext" ? "ext" : "eth"}/v${route.version}/`)).toBe(true);
      const hasBody = Object.values(route.args as Record<string, {in: string}>).some((def) => def.in === "body");
      if (route.method === "GET") expect([route.operationId, hasBody]).toEqual([route.operationId, false]);
    }
  });

  it("has one handler per route", () => {
    expect(Object.keys(handlers).sort()).toEqual(Object.keys(routes).sort());
  });

  it("refuses a repeated operationId or a repeated method and path", () => {
    const def = (routes as Record<string, Route>).getGenesis;
    expect(() => mergeRoutes([{getGenesis: def}, {getGenesis: def}])).toThrow("operationId getGenesis is defined twice");
    expect(() => mergeRoutes([{getGenesis: def}, {genesisAgain: def}])).toThrow("GET /eth/v1/beacon/genesis is used by both getGenesis and genesisAgain");
  });

  it("types a missing handler as a compile error", () => {
    // @ts-expect-error getHealth has no handler
    const incomplete: Handlers<typeof nodeRoutes, ApiContext> = {
      getNodeVersion: async () => ({data: {version: "x"}}),
      getSyncingStatus: async () => ({data: {headSlot: 0, syncDistance: 0, isSyncing: false, isOptimistic: false, elOffline: false}}),
    };
    expect(incomplete).toBeDefined();
  });
});

describe("parameter codecs", () => {
  it("state and block ids: names, slots and 0x roots", () => {
    expect(stateId.parse(["justified"], "state_id")).toBe("justified");
    expect(stateId.parse(["12"], "state_id")).toBe(12);
    expect(stateId.parse(["0x" + "AB".repeat(32)], "state_id")).toBe("0x" + "ab".repeat(32));
    expect(() => blockId.parse(["justified"], "block_id")).toThrow("Invalid block ID: justified");
    expect(() => stateId.parse(undefined, "state_id")).toThrow("Missing required parameter state_id");
  });

  it("unsigned integers: decimal only, safe range", () => {
    expect(uint.parse(["007"], "slot")).toBe(7);
    for (const bad of ["-1", "1e3", "0x10", "", "9007199254740993"]) expect(() => uint.parse([bad], "slot")).toThrow(`Invalid slot: ${bad}`);
    expect(() => uint.parse(["1", "2"], "slot")).toThrow("Parameter slot given more than once");
  });

  it("validator ids: index or 48-byte key; lists in both forms", () => {
    const key = "0x" + "01".repeat(48);
    expect(list(validatorId).parse(["1,2", key], "id")).toEqual([1, 2, Uint8Array.from({length: 48}, () => 1)]);
    expect(list(validatorId).format([1, 2])).toEqual(["1", "2"]);
    expect(list(validatorId).parse(undefined, "id")).toEqual([]);
  });

  it("graffiti: plain text or 0x bytes, padded to 32", () => {
    expect(Array.from(parseGraffiti("ab")!.slice(0, 3))).toEqual([0x61, 0x62, 0]);
    expect(Array.from(parseGraffiti("0x6162")!.slice(0, 3))).toEqual([0x61, 0x62, 0]);
    expect(parseGraffiti("0x616")).toBeUndefined();
    expect(parseGraffiti("0x" + "00".repeat(33))).toBeUndefined();
    expect(graffiti.format(parseGraffiti("ab")!)).toEqual(["0x6162" + "00".repeat(30)]);
  });
});
