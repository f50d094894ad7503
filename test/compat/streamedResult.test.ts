import {describe, expect, it} from "@jest/globals";
import type {WireResponse} from "../../src/api/wire.ts";
import {createJsonRpc, replyText} from "../../compat/server.ts";
import {startCompatServer} from "../../compat/http.ts";
import {httpTransport} from "../../src/api/client.ts";
import {createServer} from "node:http";
import {once} from "node:events";
import type {AddressInfo} from "node:net";
import {dataListItems} from "../../compat/streamedResult.ts";
import {prng} from "../../bench/seededRandom.ts";
import {validatorResponseJson} from "../validatorJson.ts";

/**
 * A single JSON-RPC call's large result streams: the REST answer's `data` list is read item by
 * item as the answer comes (checked against JSON.parse of the whole), and the reply is written
 * as the client reads it.
 */

async function items(pieces: string[]): Promise<string[]> {
  const out: string[] = [];
  for await (const item of dataListItems(pieces)) out.push(item);
  return out;
}

/** `text` cut into pieces at random places. */
function cut(text: string, random: () => number): string[] {
  const pieces: string[] = [];
  for (let i = 0; i < text.length; ) {
    const len = 1 + Math.floor(random() * 40);
    pieces.push(text.slice(i, i + len));
    i += len;
  }
  return pieces;
}

function randomValue(random: () => number, depth: number): unknown {
  const kind = Math.floor(random() * (depth > 2 ? 4 : 6));
  if (kind === 0) return Math.floor(random() * 1e6);
  if (kind === 1) return ["plain", 'with "quotes"', "back\\slash\\", "brackets ]}[{, and: colons", "\u00e9\u4e2d\n\t"][Math.floor(random() * 5)];
  if (kind === 2) return random() < 0.5;
  if (kind === 3) return null;
  if (kind === 4) return Array.from({length: Math.floor(random() * 4)}, () => randomValue(random, depth + 1));
  return Object.fromEntries(Array.from({length: Math.floor(random() * 4)}, (_, i) => [`k${i}"]`, randomValue(random, depth + 1)]));
}

describe("the data list of a REST answer, read item by item", () => {
  it("gives each item of `data` as JSON.parse of the whole answer has it, wherever the pieces are cut", async () => {
    const random = prng(7);
    for (let round = 0; round < 300; round++) {
      const data = Array.from({length: Math.floor(random() * 6)}, () => randomValue(random, 0));
      // keys that read as "data" only if their escapes were skipped come first
      const answer = {execution_optimistic: randomValue(random, 2), 'dat"a': [0], "data\\": [1], data, finalized: {nested: ["data", {data: 1}]}};
      const text = random() < 0.5 ? JSON.stringify(answer) : JSON.stringify(answer, null, 2);
      const got = await items(cut(text, random));
      expect(got.map((t) => JSON.parse(t))).toEqual(data);
    }
  });

  it("refuses an answer that ends early, has no data list, or has text after it", async () => {
    await expect(items(['{"data":[1,2', ",3"])).rejects.toThrow(/ends before/);
    await expect(items(['{"data":{"a":1}}'])).rejects.toThrow(/not a list/);
    await expect(items(['{"other":[1]}'])).rejects.toThrow(/no data list/);
    await expect(items(['{"data":[1]}', "{}"])).rejects.toThrow(/text after/);
    await expect(items(["[1,2]"])).rejects.toThrow(/not a JSON object/);
  });
});

describe("a single call's large result", () => {
  const COUNT = 5_000;
  /** a REST answer of COUNT validators in pieces, made as they are read (as the node's handler makes them) */
  function validatorsAnswer(counter: {pieces: number}): WireResponse {
    return {
      status: 200,
      headers: {"content-type": "application/json"},
      body: (function* () {
        yield '{"execution_optimistic":false,"finalized":false,"data":[';
        for (let i = 0; i < COUNT; i++) {
          counter.pieces++;
          yield `${i === 0 ? "" : ","}${JSON.stringify({...validatorResponseJson, index: String(i)})}`;
        }
        yield "]}";
      })(),
    };
  }
  const call = JSON.stringify({jsonrpc: "2.0", id: 5, method: "get_v1_beacon_states_stateId_validators", params: ["head"]});

  it("is written as the reply is read, past --rpc-max-answer, in the legacy encoding's numbers", async () => {
    const counter = {pieces: 0};
    const rpc = createJsonRpc({transport: async () => validatorsAnswer(counter), encoding: "legacy", maxAnswerChars: 100_000});
    const reply = (await rpc(call)) as AsyncIterable<string>;
    expect(typeof reply).not.toBe("string");
    const iterator = reply[Symbol.asyncIterator]();
    const first = await iterator.next();
    expect(first.value).toBe('{"jsonrpc":"2.0","id":5,"result":');
    await iterator.next();
    // one piece of the reply (64 KiB) needs about 150 validators of the answer, not all 5,000
    expect(counter.pieces).toBeLessThan(1000);
    let rest = "";
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) rest += next.value;
    expect(counter.pieces).toBe(COUNT);
    expect(rest.length).toBeGreaterThan(100_000);
  });

  it("gives the result the whole-built reply gives (legacy and REST encodings)", async () => {
    for (const encoding of ["legacy", "rest"] as const) {
      const streamed = JSON.parse((await replyText(await createJsonRpc({transport: async () => validatorsAnswer({pieces: 0}), encoding})(call)))!);
      // the same answer as one string is read whole
      const whole = async (): Promise<WireResponse> => {
        const answer = validatorsAnswer({pieces: 0});
        return {...answer, body: [...(answer.body as Iterable<string>)].join("")};
      };
      const built = JSON.parse((await replyText(await createJsonRpc({transport: whole, encoding})(call)))!);
      expect(streamed).toEqual(built);
      expect(streamed.result).toHaveLength(COUNT);
    }
    const legacy = JSON.parse((await replyText(await createJsonRpc({transport: async () => validatorsAnswer({pieces: 0}), encoding: "legacy"})(call)))!);
    // the removed server's numbers: uint64 fields as JSON numbers
    expect(legacy.result[7].index).toBe(7);
    expect(legacy.result[7].validator.effective_balance).toBe(32000000000);
    expect(legacy.result[7].validator.pubkey).toBe(validatorResponseJson.validator.pubkey);
  }, 60_000);

  it("is refused whole in a batch, where each reply is built whole and capped", async () => {
    const rpc = createJsonRpc({transport: async () => validatorsAnswer({pieces: 0}), encoding: "rest", maxAnswerChars: 100_000});
    const replies = JSON.parse((await replyText(await rpc(`[${call}]`)))!);
    expect(replies[0]).toMatchObject({id: 5, error: {code: -32000}});
  });

  it("an item the route's codec refuses breaks the reply off: the client gets no well-formed reply", async () => {
    const transport = async (): Promise<WireResponse> => ({
      status: 200,
      headers: {},
      body: ['{"execution_optimistic":false,"finalized":false,"data":[', JSON.stringify(validatorResponseJson), ',{"index":"x"}]}'],
    });
    const reply = await createJsonRpc({transport, encoding: "rest"})(call);
    await expect(replyText(reply)).rejects.toThrow();
  });

  it("over HTTP: a streamed reply arrives whole; one broken off is cut, not ended as if complete", async () => {
    const good = await startCompatServer({port: 0, address: "127.0.0.1", transport: async () => validatorsAnswer({pieces: 0}), encoding: "legacy"});
    const bad = await startCompatServer({
      port: 0,
      address: "127.0.0.1",
      encoding: "rest",
      transport: async () => ({status: 200, headers: {}, body: ['{"data":[', Array(3000).fill(JSON.stringify(validatorResponseJson)).join(","), ',{"index":"x"}]}']}),
    });
    try {
      const post = (port: number) => fetch(`http://127.0.0.1:${port}/`, {method: "POST", headers: {"content-type": "application/json"}, body: call});
      const reply = (await (await post(good.port)).json()) as {result: unknown[]};
      expect(reply.result).toHaveLength(COUNT);
      const res = await post(bad.port);
      expect(res.status).toBe(200);
      await expect(res.text()).rejects.toThrow();
    } finally {
      await Promise.all([good.close(), bad.close()]);
    }
  }, 30_000);

  it("a notification (no id) reads its answer to the end and replies nothing: no answer is left half-read", async () => {
    let finished = false;
    const answer = validatorsAnswer({pieces: 0});
    const body = answer.body as Generator<string>;
    answer.body = (function* () {
      yield* body;
      finished = true;
    })();
    const rpc = createJsonRpc({transport: async () => answer, encoding: "legacy"});
    const reply = await rpc(JSON.stringify({jsonrpc: "2.0", method: "get_v1_beacon_states_stateId_validators", params: ["head"]}));
    expect(reply).toBeUndefined();
    expect(finished).toBe(true);
  });

  it("in front of another node (--upstream): the reply starts before the upstream's answer has all arrived", async () => {
    let releaseRest: () => void = () => {};
    const restHeld = new Promise<void>((resolve) => (releaseRest = resolve));
    const items = Array.from({length: COUNT}, (_, i) => JSON.stringify({...validatorResponseJson, index: String(i)}));
    const upstream = createServer((_req, res) => {
      res.writeHead(200, {"content-type": "application/json"});
      res.write(`{"execution_optimistic":false,"finalized":false,"data":[${items.slice(0, COUNT / 2).join(",")}`);
      // the second half only once the JSON-RPC client has read part of its reply
      void restHeld.then(() => res.end(`,${items.slice(COUNT / 2).join(",")}]}`));
    }).listen(0, "127.0.0.1");
    await once(upstream, "listening");
    const rest = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    const rpc = await startCompatServer({port: 0, address: "127.0.0.1", transport: httpTransport(rest, {streamLists: true}), encoding: "legacy", upstream: rest});
    try {
      const res = await fetch(`http://127.0.0.1:${rpc.port}/`, {method: "POST", headers: {"content-type": "application/json"}, body: call});
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      let text = "";
      while (text.length < 100_000) text += (await reader.read()).value ?? "";
      releaseRest();
      for (let next = await reader.read(); !next.done; next = await reader.read()) text += next.value;
      const reply = JSON.parse(text) as {id: number; result: {index: number}[]};
      expect(reply.result).toHaveLength(COUNT);
      expect(reply.result[COUNT - 1].index).toBe(COUNT - 1);
    } finally {
      releaseRest();
      await rpc.close();
      upstream.close();
    }
  }, 30_000);
});
