import {describe, expect, it} from "@jest/globals";
import {ApiError} from "../../../src/api/errors.ts";
import {ApiClientError} from "../../../src/api/client.ts";
import {errorMessage} from "../../../src/validator/context.ts";

/** The duty logs' error text: a refused batch says why its first item was refused. */
describe("validator error messages", () => {
  it("adds the first failure of a refused batch, in-process or over HTTP; plain errors stay as they are", () => {
    const failures = [{index: 1, message: "attestation target block unknown"}];
    expect(errorMessage(new ApiError(400, "2 of 2 attestations failed", failures))).toBe("2 of 2 attestations failed (item 1: attestation target block unknown)");
    expect(errorMessage(new ApiClientError(400, {code: 400, message: "2 of 2 attestations failed", failures}))).toMatch(/\(item 1: attestation target block unknown\)$/);
    expect(errorMessage(new ApiError(503, "syncing"))).toBe("syncing");
    expect(errorMessage("plain")).toBe("plain");
  });
});
