import {describe, it, expect} from "@jest/globals";
import {parseJsonInSlices} from "../../../src/api/server/slicedJson.ts";
import {prng as seededRandom} from "../../../bench/seededRandom.ts";

/** Checked against the native JSON.parse: the same value for valid text, a SyntaxError for invalid text. */

const encode = (text: string): Uint8Array => new TextEncoder().encode(text);
// tiny slices: every container of a few bytes is split, so the split paths run on small documents
const tiny = {sliceBytes: 4, maxSplitDepth: 8, yieldToLoop: async () => {}};

async function outcome(text: string, opts = tiny): Promise<{value?: unknown; error?: string}> {
  try {
    return {value: await parseJsonInSlices(encode(text), opts)};
  } catch (e) {
    return {error: (e as Error).name};
  }
}

function nativeOutcome(text: string): {value?: unknown; error?: string} {
  try {
    return {value: JSON.parse(text)};
  } catch (e) {
    return {error: (e as Error).name};
  }
}

function randomValue(rand: () => number, depth: number): unknown {
  const pick = Math.floor(rand() * (depth > 3 ? 5 : 7));
  const strings = ["", "a", 'q"uote', "back\\slash\\", "\\\\\"", "ünï", "__proto__", "0x" + "ab".repeat(10), "\u2028"];
  switch (pick) {
    case 0: return null;
    case 1: return rand() < 0.5;
    case 2: return Math.floor(rand() * 1e6) / (rand() < 0.5 ? 1 : 7);
    case 3: return strings[Math.floor(rand() * strings.length)];
    case 4: return String(Math.floor(rand() * 1000));
    case 5: return Array.from({length: Math.floor(rand() * 6)}, () => randomValue(rand, depth + 1));
    default: {
      const obj: Record<string, unknown> = {};
      for (let i = Math.floor(rand() * 5); i > 0; i--) obj[strings[Math.floor(rand() * strings.length)] + i] = randomValue(rand, depth + 1);
      return obj;
    }
  }
}

function spaced(text: string, rand: () => number): string {
  // spaces between tokens: after structural characters outside strings
  let out = "";
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    out += c;
    if (c === '"' && text[i - 1] !== "\\") inString = !inString;
    else if (c === "\\" && inString) {
      out += text[++i];
      continue;
    }
    if (!inString && ",:[]{}".includes(c) && rand() < 0.3) out += [" ", "\n", "\t", "\r\n  "][Math.floor(rand() * 4)];
  }
  return out;
}

describe("JSON parsed in slices", () => {
  it("gives what JSON.parse gives for generated documents", async () => {
    const rand = seededRandom(7);
    for (let n = 0; n < 400; n++) {
      const text = spaced(JSON.stringify(randomValue(rand, 0)), rand);
      expect(await outcome(text)).toEqual(nativeOutcome(text));
    }
  });

  it("refuses what JSON.parse refuses, for every cut and every corrupted byte of a document", async () => {
    const text = spaced(JSON.stringify({a: [1, "x\\\"y", {b: [null, true, {}], "c:": []}], d: "e"}), seededRandom(3));
    for (let cut = 0; cut < text.length; cut++) {
      const partial = text.slice(0, cut);
      expect([partial, await outcome(partial)]).toEqual([partial, nativeOutcome(partial)]);
    }
    for (let i = 0; i < text.length; i++) {
      for (const c of ["}", "]", ",", ":", '"', "x", " "]) {
        const changed = text.slice(0, i) + c + text.slice(i + 1);
        expect([changed, await outcome(changed)]).toEqual([changed, nativeOutcome(changed)]);
      }
    }
  });

  it("keeps JSON.parse's own-property __proto__ and last-duplicate-wins", async () => {
    const text = '{"__proto__": {"polluted": 1}, "k": 1, "k": [2, 3], "z": 0}';
    const value = (await parseJsonInSlices(encode(text), tiny)) as Record<string, unknown>;
    expect(value).toEqual(JSON.parse(text));
    expect(Object.keys(value)).toEqual(Object.keys(JSON.parse(text)));
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("applies a reviver that reads only the value and its source text, as JSON.parse does", async () => {
    const exact = (_key: string, value: unknown, context?: {source?: string}) => (typeof value === "number" && !Number.isSafeInteger(value) ? `exact:${context?.source}` : value);
    const text = JSON.stringify({a: [1, 2, {b: 3}], c: "d"}).replace("3", "18446744073709551616").replace("[1,", "[1.5e400,");
    expect(await parseJsonInSlices(encode(text), {...tiny, reviver: exact})).toEqual(JSON.parse(text, exact as never));
  });

  it("lets the event loop in while it parses a large body", async () => {
    const items = Array.from({length: 20_000}, (_, i) => ({index: String(i), root: "0x" + "cd".repeat(32)}));
    const text = JSON.stringify({data: items, tail: "end"});
    let yields = 0;
    const value = await parseJsonInSlices(encode(text), {sliceBytes: 64 * 1024, yieldToLoop: async () => void yields++});
    expect(value).toEqual(JSON.parse(text));
    // about one yield per slice of text
    expect(yields).toBeGreaterThanOrEqual(Math.floor(text.length / (64 * 1024)) - 1);
  });
});
