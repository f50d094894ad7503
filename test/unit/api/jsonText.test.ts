import {describe, it, expect} from "@jest/globals";
import {ssz} from "@lodestar/types";
import {jsonTextOf, markShared} from "../../../src/api/jsonText.ts";
import {listData} from "../../../src/api/codecs.ts";
import {envelopeText} from "../../../src/api/streaming.ts";

describe("JSON text of shared answers", () => {
  it("a shared value is serialized once per codec; a value not shared, every time", () => {
    let calls = 0;
    const compute = (v: {n: number}) => () => (calls++, JSON.stringify(v));
    const codecA = {};
    const codecB = {};
    const fresh = {n: 1};
    jsonTextOf(codecA, fresh, compute(fresh));
    jsonTextOf(codecA, fresh, compute(fresh));
    expect(calls).toBe(2);

    const kept = markShared({n: 2});
    expect(jsonTextOf(codecA, kept, compute(kept))).toBe('{"n":2}');
    expect(jsonTextOf(codecA, kept, compute(kept))).toBe('{"n":2}');
    expect(calls).toBe(3);
    // another codec writes the same value its own way
    expect(jsonTextOf(codecB, kept, () => "other")).toBe("other");
  });

  it("a list's text from its items' texts is exactly JSON.stringify of its JSON", () => {
    const codec = listData<{epoch: number; root: Uint8Array}, unknown>(ssz.phase0.Checkpoint);
    const items = [{epoch: 3, root: new Uint8Array(32).fill(1)}, markShared({epoch: 4, root: new Uint8Array(32).fill(2)})];
    expect(codec.toJsonText!(items, {})).toBe(JSON.stringify(codec.toJson(items, {})));
    expect(codec.toJsonText!([], {})).toBe("[]");
  });

  it("the envelope around data text is what JSON.stringify gives for the whole object", () => {
    const data = {a: ["1", "2"]};
    expect(envelopeText({execution_optimistic: false, finalized: true}, JSON.stringify(data))).toBe(JSON.stringify({execution_optimistic: false, finalized: true, data}));
    expect(envelopeText({}, JSON.stringify(data))).toBe(JSON.stringify({data}));
  });
});
