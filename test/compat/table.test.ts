import {describe, expect, it} from "@jest/globals";
import {buildMethodTable, legacyMethods} from "../../compat/methods.ts";
import {field} from "../../compat/results.ts";
import {LEGACY_TABLE} from "../../compat/table.ts";
import {routes} from "../../src/api/routes/index.ts";
import type {Route} from "../../src/api/routes/types.ts";

/** compat's table over the route table: what it accepts, and the mistakes it refuses at load. */

const table = routes as unknown as Record<string, Route>;

describe("the legacy table", () => {
  it("lets one route serve several methods, each with its own result", () => {
    const identity = [...legacyMethods.values()].filter((m) => m.route.operationId === "getNetworkIdentity");
    expect(identity.map((m) => m.name)).toEqual(["get_v1_node_identity", "getNetworkPeerId", "getNetworkEnr"]);
    expect(identity.map((m) => m.result?.describe("data"))).toEqual([undefined, "`data.peer_id`", "`data.enr`"]);
  });

  it("maps no method to a route that refuses the current fork's objects (the pre-electra v1 routes)", () => {
    const preElectraOnly = ["getBlockAttestations", "getPoolAttestations", "submitPoolAttestations", "getPoolAttesterSlashings", "submitPoolAttesterSlashings", "getState", "getAggregatedAttestation", "publishAggregateAndProofs"];
    expect(Object.keys(LEGACY_TABLE).filter((id) => preElectraOnly.includes(id))).toEqual([]);
  });

  it.each([
    [{getGenesis: [{method: "a", params: ["stateId"]}]}, "names stateId, which is not an argument of the route"],
    [{noSuchRoute: [{method: "a", params: []}]}, "is not in the route table"],
    [{getGenesis: [{method: "a", params: []}], getStateFork: [{method: "a", params: ["stateId"]}]}, "a is the legacy method of both getGenesis and getStateFork"],
    [{getStateFork: [{method: "a", params: []}]}, "leaves out the required argument(s) stateId"],
    [{getStateFork: [{method: "a", params: ["stateId"], forkOfBody: () => 1}]}, "sets the fork of a route without a fork argument"],
    [{submitPoolAttestationsV2: [{method: "a", params: ["attestations"]}]}, "leaves out the required argument(s) fork"],
    [{submitPoolAttestationsV2: [{method: "a", params: ["attestations"], forkOfBody: () => 1, fill: {attestations: {describe: "", find: async () => ""}}}]}, "must be params of the method and not its body"],
    [{eventstream: [{method: "a", params: ["topics"]}]}, "event stream"],
  ])("refuses %j", (legacyTable, message) => {
    expect(() => buildMethodTable(table, legacyTable as never)).toThrow(message);
  });

  it("takes a well-formed entry", () => {
    const methods = buildMethodTable(table, {getStateFork: [{method: "a", params: ["stateId"], result: field("epoch")}]});
    expect([...methods.keys()]).toEqual(["a"]);
    expect(methods.get("a")!.params.map((p) => [p.name, p.required])).toEqual([["stateId", true]]);
  });
});
