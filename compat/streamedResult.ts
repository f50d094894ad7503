import type {Route} from "../src/api/routes/types.ts";
import {isChunked, pieceTexts, type WireResponse} from "../src/api/wire.ts";
import {CLOSE_ARRAY, CLOSE_OBJECT, COLON, COMMA, OPEN_ARRAY, OPEN_OBJECT, QUOTE, isSpace} from "../src/api/server/slicedJson.ts";
import {workSlicer} from "../src/api/workSlices.ts";
import {toLegacyNumbers, type Encoding} from "./adapters.ts";
import type {LegacyMethod} from "./methods.ts";

/**
 * A JSON-RPC result too large to build whole (every validator of a mainnet state is hundreds of
 * MB of JSON): the `data` list of a REST answer read item by item from the answer's text as it
 * comes, each item checked with the route's codec (and given legacy numbers where asked), and
 * written out as the pieces of the result's text. Nothing holds more than a piece of the answer
 * and one item at a time, and the REST answer is read no faster than the reply is written.
 */
export class StreamedResult {
  readonly pieces: AsyncIterable<string>;
  constructor(pieces: AsyncIterable<string>) {
    this.pieces = pieces;
  }
}

/** What a streamed result writes out per item: its JSON text, from the item's text in the answer. */
export type ItemWriter = (itemText: string) => string;

/** Characters gathered before a piece of the result is handed on. */
const PIECE_CHARS = 64 * 1024;

/** The result text `[item,item,...]` of the answer's `data` list, written by `writeItem`, in pieces. */
export async function* streamedDataList(answer: Iterable<string> | AsyncIterable<string>, writeItem: ItemWriter): AsyncGenerator<string> {
  const next = workSlicer();
  let out = "[";
  let count = 0;
  for await (const item of dataListItems(answer)) {
    out += (count++ === 0 ? "" : ",") + writeItem(item);
    if (out.length >= PIECE_CHARS) {
      yield out;
      out = "";
    }
    if ((count & 15) === 0) await next();
  }
  yield `${out}]`;
}

/**
 * The texts of the items of the top-level `data` array of a JSON object given in pieces, as
 * each item ends. Only the structure is read here (strings, nesting, the keys of the top level);
 * each item's own text is left for JSON.parse. Throws when the text ends early, or when the
 * top level is not an object whose `data` is an array.
 */
export async function* dataListItems(pieces: Iterable<string> | AsyncIterable<string>): AsyncGenerator<string> {
  let depth = 0;
  let inString = false;
  let escaped = false;
  /** at the top level: the key being read, its text so far (null when not reading a key) */
  let key: string | null = null;
  let lastKey = "";
  let expectKey = false;
  /** inside data: the text of the item so far */
  let item = "";
  let inData = false;
  let sawData = false;
  let dataClosed = false;
  let rootClosed = false;
  for await (const piece of pieces) {
    let itemStart = inData ? 0 : -1;
    /** the next backslash at or after i (piece.length when none), searched again once passed */
    let nextBackslash = -1;
    for (let i = 0; i < piece.length; i++) {
      if (inString) {
        // a string's characters change nothing up to its closing quote: jump there, minding escapes
        if (escaped) {
          escaped = false;
          if (key !== null) key += piece[i];
          continue;
        }
        if (nextBackslash < i) {
          nextBackslash = piece.indexOf("\\", i);
          if (nextBackslash === -1) nextBackslash = piece.length;
        }
        const quote = piece.indexOf('"', i);
        if (nextBackslash < piece.length && (quote === -1 || nextBackslash < quote)) {
          if (key !== null) key += piece.slice(i, nextBackslash + 1);
          escaped = true;
          i = nextBackslash;
          continue;
        }
        if (quote === -1) {
          if (key !== null) key += piece.slice(i);
          break;
        }
        if (key !== null) {
          lastKey = key + piece.slice(i, quote);
          key = null;
        }
        inString = false;
        i = quote;
        continue;
      }
      const c = piece.charCodeAt(i);
      if (isSpace(c)) continue;
      if (rootClosed) throw new Error("the REST answer has text after its JSON object");
      if (c === QUOTE) {
        inString = true;
        if (depth === 1 && expectKey) {
          key = "";
          expectKey = false;
        }
      } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
        if (depth === 0 && c !== OPEN_OBJECT) throw new Error("the REST answer is not a JSON object");
        if (depth === 1 && lastKey === "data" && !sawData) {
          if (c !== OPEN_ARRAY) throw new Error("the REST answer's data is not a list");
          sawData = true;
          inData = true;
          itemStart = i + 1;
          item = "";
          depth++;
          continue;
        }
        depth++;
        if (depth === 1) expectKey = true;
      } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
        if (inData && depth === 2) {
          if (c !== CLOSE_ARRAY) throw new Error("the REST answer's data list is not closed by ]");
          item += piece.slice(itemStart, i);
          if (item.trim() !== "") yield item;
          item = "";
          inData = false;
          dataClosed = true;
          itemStart = -1;
        }
        depth--;
        if (depth === 0) rootClosed = true;
        if (depth < 0) throw new Error("the REST answer's JSON closes more than it opens");
      } else if (c === COMMA) {
        if (depth === 1) expectKey = true;
        else if (inData && depth === 2) {
          item += piece.slice(itemStart, i);
          yield item;
          item = "";
          itemStart = i + 1;
        }
      } else if (c === COLON) {
        // a key's value follows: nothing to do
      } else if (depth === 0) {
        throw new Error("the REST answer is not a JSON object");
      }
    }
    if (inData && itemStart >= 0) item += piece.slice(itemStart);
  }
  if (!rootClosed || inString) throw new Error("the REST answer ends before its JSON does");
  if (!sawData || !dataClosed) throw new Error("the REST answer has no data list");
}

/**
 * The result of `method` from its REST answer, streamed, where it can be: a successful answer
 * that comes in pieces (a large list), whose result is the whole `data` list (no selector), of a
 * route whose codec reads the list item by item. Otherwise undefined: the result is built whole.
 */
export function streamedResultOf(method: LegacyMethod, res: WireResponse, encoding: Encoding): StreamedResult | undefined {
  const response = method.route.response as Route["response"];
  const answer = res.textStream ?? (isChunked(res.body) ? pieceTexts(res.body) : undefined);
  if (answer === undefined || res.status < 200 || res.status >= 300) return undefined;
  if (response.kind !== "data" || response.unwrapped || method.result || !response.data.itemFromJson) return undefined;
  const itemFromJson = response.data.itemFromJson;
  const writeItem: ItemWriter = (text) => {
    const json = JSON.parse(text) as unknown;
    const value = itemFromJson(json);
    return encoding === "legacy" ? JSON.stringify(toLegacyNumbers(json, value)) : text;
  };
  return new StreamedResult(streamedDataList(answer, writeItem));
}

/** The pieces of a reply `{"jsonrpc":"2.0","id":…,"result":…}` whose result is streamed. */
export async function* streamedReply(reply: {id?: unknown}, result: StreamedResult): AsyncGenerator<string> {
  yield `{"jsonrpc":"2.0","id":${JSON.stringify(reply.id ?? null)},"result":`;
  yield* result.pieces;
  yield "}";
}
