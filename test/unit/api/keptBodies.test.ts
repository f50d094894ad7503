import {describe, it, expect} from "@jest/globals";
import {parseKept} from "../../../src/api/server/keptBodies.ts";
import {stringListBody, parseUintId} from "../../../src/api/codecs.ts";
import type {BodyDef} from "../../../src/api/routes/types.ts";

/** Parsed bodies kept by their bytes: one value per distinct small body, frozen; refusals and large bodies are never kept. */

const indices = stringListBody<number, unknown>("validator indices", parseUintId, String) as BodyDef<unknown, unknown>;
const bytesOf = (text: string) => new TextEncoder().encode(text);

function counting(def: BodyDef<unknown, unknown>) {
  let parses = 0;
  const parse = (text: string) => async () => {
    parses++;
    return def.fromJson(JSON.parse(text), {}, undefined as never);
  };
  return {parse: (text: string) => parseKept(def, bytesOf(text), parse(text)), parses: () => parses};
}

describe("kept request bodies", () => {
  it("the same bytes give the same frozen value, parsed once; other bytes their own", async () => {
    const {parse, parses} = counting(indices);
    const first = await parse('["1","2","3"]');
    expect(first).toEqual([1, 2, 3]);
    expect(Object.isFrozen(first)).toBe(true);
    expect(await parse('["1","2","3"]')).toBe(first);
    expect(parses()).toBe(1);
    const spaced = await parse('["1", "2", "3"]');
    expect(spaced).toEqual([1, 2, 3]);
    expect(spaced).not.toBe(first);
    expect(parses()).toBe(2);
  });

  it("a kept body is answered at once, not as a promise, whichever of several clients' bodies comes", async () => {
    // a codec of its own: what other tests keep is not kept here
    const {parse, parses} = counting({...indices});
    const a = await parse('["1","2"]');
    const b = await parse('["3"]');
    for (let i = 0; i < 3; i++) {
      const again = [parse('["1","2"]'), parse('["3"]'), parse('["3"]'), parse('["1","2"]')];
      for (const value of again) expect(value).not.toBeInstanceOf(Promise);
      expect(again).toEqual([a, b, b, a]);
      expect(again[0]).toBe(a);
      expect(again[1]).toBe(b);
    }
    // the same length, other bytes
    expect(await parse('["1","3"]')).toEqual([1, 3]);
    expect(parse('["1","2"]')).toBe(a);
    expect(parses()).toBe(3);
  });

  it("a body the codec refuses is refused every time, never kept", async () => {
    const {parse, parses} = counting(indices);
    await expect(parse('["1","x"]')).rejects.toThrow(/invalid validator indices item 1/);
    await expect(parse('["1","x"]')).rejects.toThrow(/invalid validator indices item 1/);
    expect(parses()).toBe(2);
  });

  it("keeps nothing for a codec not marked, nor a body over 16 KiB", async () => {
    const unmarked = counting({...indices, keptByBytes: false});
    const a = await unmarked.parse('["7"]');
    expect(await unmarked.parse('["7"]')).not.toBe(a);
    expect(unmarked.parses()).toBe(2);

    const large = counting(indices);
    const text = JSON.stringify(Array.from({length: 3000}, (_, i) => String(i)));
    expect(text.length).toBeGreaterThan(16 * 1024);
    const b = await large.parse(text);
    expect(await large.parse(text)).not.toBe(b);
    expect(large.parses()).toBe(2);
  });

  it("a flood of distinct bodies is bounded: every answer stays right, and old bodies are parsed again", async () => {
    const {parse, parses} = counting(indices);
    const first = await parse('["0"]');
    for (let i = 1; i <= 300; i++) expect(await parse(`["${i}"]`)).toEqual([i]);
    expect(parses()).toBe(301);
    const again = await parse('["0"]');
    expect(again).toEqual([0]);
    expect(again).not.toBe(first);
  });
});
