import {describe, expect, it} from "@jest/globals";
import {Ajv2020} from "ajv/dist/2020.js";
import {eventExamples, responseSchema, specOperation, validateResponse} from "./openapi.ts";

/** The schema loader itself: refs resolved across files, and strict where the spec is. */

const ROOT = "0x" + "ab".repeat(32);
const genesis = {genesis_time: "1590832934", genesis_validators_root: ROOT, genesis_fork_version: "0x00000000"};

describe("the OpenAPI schemas", () => {
  it("accept a conforming body", () => {
    expect(validateResponse("getGenesis", 200, {data: genesis})).toEqual([]);
  });

  it("hold bodies to required fields, patterns, decimal strings and enums", () => {
    expect(validateResponse("getGenesis", 200, {data: {...genesis, genesis_fork_version: undefined}})).toEqual([
      "/data must have required property 'genesis_fork_version'",
    ]);
    expect(validateResponse("getGenesis", 200, {data: {...genesis, genesis_validators_root: "0xab"}})).toEqual([
      '/data/genesis_validators_root must match pattern "^0x[a-fA-F0-9]{64}$"',
    ]);
    expect(validateResponse("getGenesis", 200, {data: {...genesis, genesis_time: "0x10"}})).toEqual(['/data/genesis_time must match pattern "^[0-9]+$"']);
    const validator = {index: "1", balance: "32000000000", status: "sleeping", validator: {}};
    expect(validateResponse("getStateValidator", 200, {execution_optimistic: false, finalized: true, data: validator})).toContain(
      '/data/status must be equal to one of the allowed values ["pending_initialized","pending_queued","active_ongoing","active_exiting","active_slashed","exited_unslashed","exited_slashed","withdrawal_possible","withdrawal_done"]'
    );
  });

  it("allow extra properties, as the spec does not forbid them", () => {
    expect(validateResponse("getGenesis", 200, {data: {...genesis, extra: 1}, more: true})).toEqual([]);
  });

  it("check error bodies, bodies the spec has none for, and undeclared statuses", () => {
    expect(validateResponse("getGenesis", 404, {code: 404, message: "Chain genesis info is not yet known"})).toEqual([]);
    expect(validateResponse("getGenesis", 404, {message: "no code"})).toEqual(["(body) must have required property 'code'"]);
    expect(validateResponse("submitPoolSyncCommitteeSignatures", 400, {code: 400, message: "x"})).toEqual([
      "(body) must have required property 'failures'",
    ]);
    expect(validateResponse("getHealth", 200, undefined)).toEqual([]);
    expect(validateResponse("getHealth", 200, {data: 1})).toEqual(["getHealth: status 200 has no JSON body in the spec, got one"]);
    expect(validateResponse("getHealth", 400, {code: 400, message: "Invalid syncing status code"})).toEqual([]);
    expect(validateResponse("getGenesis", 418, undefined)).toEqual(["getGenesis: status 418 is not among the spec's (200, 404, 500)"]);
    expect(validateResponse("getExtNothing", 200, {})).toEqual(["getExtNothing is not in the OpenAPI spec"]);
  });

  it("read every operation with its method, path and required headers", () => {
    const op = specOperation("getBlockV2")!;
    expect([op.method, op.path]).toEqual(["GET", "/eth/v2/beacon/blocks/{block_id}"]);
    expect(op.requiredHeaders.get(200)).toContain("Eth-Consensus-Version");
  });

  it("give self-contained schemas, with every reference resolved", () => {
    const schema = responseSchema("getBlockHeader", 200)!;
    expect(JSON.stringify(schema)).not.toMatch(/"\$ref":"(?!#\/\$defs\/)/);
    const validate = new Ajv2020({strict: false, validateFormats: false, logger: false}).compile(schema);
    expect(validate({execution_optimistic: false, finalized: false, data: {}})).toBe(false);
    expect(responseSchema("getHealth", 200)).toBeUndefined();
  });

  it("take the event stream's examples as the shape of each topic", () => {
    expect(Object.keys(eventExamples().get("head")!)).toContain("current_duty_dependent_root");
  });
});
