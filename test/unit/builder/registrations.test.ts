import {afterEach, describe, expect, it} from "@jest/globals";
import {mkdtempSync, rmSync} from "node:fs";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {ssz} from "@lodestar/types";
import {RegistrationStore} from "../../../src/builder/registrations.ts";

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, {recursive: true, force: true})));

function registration(key: number, timestamp: number, gasLimit = 30_000_000) {
  const signed = ssz.bellatrix.SignedValidatorRegistrationV1.defaultValue();
  Object.assign(signed.message, {pubkey: new Uint8Array(48).fill(key), timestamp, gasLimit, feeRecipient: new Uint8Array(20).fill(key)});
  return signed;
}

describe("builder registration store", () => {
  it("keeps the newest per key across restarts, and marks only changes pending", () => {
    const dir = mkdtempSync(join(tmpdir(), "builder-registrations-"));
    dirs.push(dir);
    const file = join(dir, "builder", "registrations.json");
    const store = new RegistrationStore(file);
    expect(store.set(registration(1, 100))).toBe(true);
    expect(store.set(registration(2, 100))).toBe(true);
    // the same preferences signed again later: kept, nothing new for the relay
    expect(store.set(registration(1, 200))).toBe(false);
    // an older one is ignored
    expect(store.set(registration(1, 50, 1))).toBe(false);
    expect(store.takePending().map((r) => r.message.pubkey[0]).sort()).toEqual([1, 2]);
    expect(store.takePending()).toEqual([]);
    store.save();

    const reopened = new RegistrationStore(file);
    expect(reopened.size).toBe(2);
    expect(reopened.get(new Uint8Array(48).fill(1))?.message.timestamp).toBe(200);
    expect(reopened.set(registration(2, 300, 36_000_000))).toBe(true);
    expect(reopened.takePending().map((r) => r.message.gasLimit)).toEqual([36_000_000]);
  });
});
