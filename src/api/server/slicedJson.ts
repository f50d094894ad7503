/**
 * JSON.parse of large bodies in slices that yield to the event loop, so that a 20 MB body does
 * not hold the node's own work (a block to propose or import) for a second. The text is split
 * along its structure: a large array or object is cut into runs of elements or members of about
 * `sliceBytes`, each run given to the native JSON.parse, and the event loop is let in between
 * runs. Elements that are large themselves are split the same way, down to `maxSplitDepth`
 * levels. The result is what JSON.parse gives for the whole text, and text JSON.parse refuses is
 * refused (a SyntaxError).
 */

export interface SlicedJsonOptions {
  /** bytes of text given to JSON.parse at once (default 256 KiB); smaller bodies are parsed whole */
  sliceBytes?: number;
  /** containers deeper than this are parsed whole (bounds the split's own work on nested input) */
  maxSplitDepth?: number;
  /** lets the event loop in (default: setImmediate) */
  yieldToLoop?: () => Promise<void>;
  /**
   * JSON.parse's reviver, for one that reads only the value and its source text: each slice is
   * parsed apart, so the key and holder it is called with are those within the slice
   */
  reviver?: (key: string, value: unknown, context?: {source?: string}) => unknown;
}

/** JSON's structural characters, as char codes (the same in UTF-8 bytes and in JS strings) */
export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const COMMA = 0x2c;
export const COLON = 0x3a;
export const OPEN_ARRAY = 0x5b;
export const CLOSE_ARRAY = 0x5d;
export const OPEN_OBJECT = 0x7b;
export const CLOSE_OBJECT = 0x7d;

const decoder = new TextDecoder();
const setImmediateYield = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export function isSpace(b: number): boolean {
  return b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
}

function syntaxError(message: string, at: number): SyntaxError {
  return new SyntaxError(`${message} at position ${at}`);
}

export async function parseJsonInSlices(bytes: Uint8Array, opts: SlicedJsonOptions = {}): Promise<unknown> {
  const sliceBytes = opts.sliceBytes ?? 256 * 1024;
  const reviver = opts.reviver as ((this: unknown, key: string, value: unknown) => unknown) | undefined;
  if (bytes.length <= sliceBytes) return JSON.parse(decoder.decode(bytes), reviver);
  const parser = new SlicedParser(bytes, sliceBytes, opts.maxSplitDepth ?? 4, opts.yieldToLoop ?? setImmediateYield, reviver);
  const start = parser.skipSpace(0);
  const end = parser.valueEnd(start);
  if (parser.skipSpace(end) !== bytes.length) throw syntaxError("Unexpected non-whitespace character after JSON", parser.skipSpace(end));
  return parser.parse(start, end, 0);
}

class SlicedParser {
  /** bytes parsed or scanned since the event loop was last let in */
  private sinceYield = 0;

  private readonly bytes: Uint8Array;
  private readonly sliceBytes: number;
  private readonly maxSplitDepth: number;
  private readonly yieldToLoop: () => Promise<void>;
  private readonly reviver?: (this: unknown, key: string, value: unknown) => unknown;

  constructor(bytes: Uint8Array, sliceBytes: number, maxSplitDepth: number, yieldToLoop: () => Promise<void>, reviver?: (this: unknown, key: string, value: unknown) => unknown) {
    this.bytes = bytes;
    this.sliceBytes = sliceBytes;
    this.maxSplitDepth = maxSplitDepth;
    this.yieldToLoop = yieldToLoop;
    this.reviver = reviver;
  }

  private jsonParse(text: string): unknown {
    return JSON.parse(text, this.reviver);
  }

  skipSpace(i: number): number {
    while (i < this.bytes.length && isSpace(this.bytes[i])) i++;
    return i;
  }

  /** Where the value starting at `i` (not a space) ends; only its extent is checked, JSON.parse checks the rest. */
  valueEnd(i: number): number {
    const b = this.bytes;
    if (i >= b.length) throw syntaxError("Unexpected end of JSON input", i);
    if (b[i] === QUOTE) return this.stringEnd(i);
    if (b[i] === OPEN_ARRAY || b[i] === OPEN_OBJECT) {
      let depth = 0;
      for (let j = i; j < b.length; j++) {
        const c = b[j];
        if (c === QUOTE) j = this.stringEnd(j) - 1;
        else if (c === OPEN_ARRAY || c === OPEN_OBJECT) depth++;
        else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
          if (--depth === 0) return j + 1;
        }
      }
      throw syntaxError("Unexpected end of JSON input", b.length);
    }
    let j = i;
    while (j < b.length && !isSpace(b[j]) && b[j] !== COMMA && b[j] !== CLOSE_ARRAY && b[j] !== CLOSE_OBJECT) j++;
    if (j === i) throw syntaxError(`Unexpected character ${String.fromCharCode(b[i])}`, i);
    return j;
  }

  /** The index after the closing quote of the string opening at `i`. */
  private stringEnd(i: number): number {
    const b = this.bytes;
    let j = i + 1;
    for (;;) {
      j = b.indexOf(QUOTE, j);
      if (j === -1) throw syntaxError("Unterminated string in JSON", i);
      let backslashes = 0;
      while (b[j - 1 - backslashes] === BACKSLASH) backslashes++;
      if (backslashes % 2 === 0) return j + 1;
      j++;
    }
  }

  private text(start: number, end: number): string {
    return decoder.decode(this.bytes.subarray(start, end));
  }

  private async account(bytes: number): Promise<void> {
    this.sinceYield += bytes;
    if (this.sinceYield >= this.sliceBytes) {
      this.sinceYield = 0;
      await this.yieldToLoop();
    }
  }

  /** The value of `bytes[start, end)`, which holds exactly one value with no surrounding space. */
  async parse(start: number, end: number, depth: number): Promise<unknown> {
    const open = this.bytes[start];
    if (end - start <= this.sliceBytes || depth >= this.maxSplitDepth || (open !== OPEN_ARRAY && open !== OPEN_OBJECT)) {
      await this.account(end - start);
      return this.jsonParse(this.text(start, end));
    }
    return open === OPEN_ARRAY ? this.parseArray(start, end, depth) : this.parseObject(start, end, depth);
  }

  /**
   * The items of a container between its brackets, each `[itemStart, itemEnd)` (for objects, from
   * the key to the end of the value), checking the commas between them and the closing bracket.
   */
  private *items(start: number, end: number, isObject: boolean): Generator<{itemStart: number; valueStart: number; itemEnd: number}> {
    const b = this.bytes;
    const close = end - 1;
    if (b[close] !== (isObject ? CLOSE_OBJECT : CLOSE_ARRAY)) throw syntaxError(`Expected '${isObject ? "}" : "]"}'`, close);
    let i = this.skipSpace(start + 1);
    if (i === close) return;
    for (;;) {
      const itemStart = i;
      let valueStart = i;
      if (isObject) {
        if (b[i] !== QUOTE) throw syntaxError("Expected a property name", i);
        i = this.skipSpace(this.stringEnd(i));
        if (b[i] !== COLON) throw syntaxError("Expected ':' after a property name", i);
        valueStart = this.skipSpace(i + 1);
      }
      const itemEnd = this.valueEnd(valueStart);
      yield {itemStart, valueStart, itemEnd};
      i = this.skipSpace(itemEnd);
      if (i === close) return;
      if (b[i] !== COMMA) throw syntaxError(`Expected ',' or '${isObject ? "}" : "]"}'`, i);
      i = this.skipSpace(i + 1);
      if (i === close) throw syntaxError("Unexpected trailing comma", i);
    }
  }

  private async parseArray(start: number, end: number, depth: number): Promise<unknown[]> {
    const result: unknown[] = [];
    await this.eachSlice(start, end, depth, false, (run) => {
      for (const item of run as unknown[]) result.push(item);
    }, (_item, value) => result.push(value));
    return result;
  }

  private async parseObject(start: number, end: number, depth: number): Promise<Record<string, unknown>> {
    const result: Record<string, unknown> = {};
    // JSON.parse makes "__proto__" an own property; plain assignment would set the prototype
    const set = (key: string, value: unknown): void => void Object.defineProperty(result, key, {value, writable: true, enumerable: true, configurable: true});
    await this.eachSlice(start, end, depth, true, (run) => {
      for (const key of Object.keys(run as object)) set(key, (run as Record<string, unknown>)[key]);
    }, (item, value) => set(JSON.parse(this.text(item.itemStart, this.stringEnd(item.itemStart))) as string, value));
    return result;
  }

  /**
   * The items of a container in order: runs of small items parsed together by JSON.parse, as one
   * array or object (`takeRun`), and each large item's value split further (`takeLarge`).
   */
  private async eachSlice(
    start: number,
    end: number,
    depth: number,
    isObject: boolean,
    takeRun: (run: unknown) => void,
    takeLarge: (item: {itemStart: number}, value: unknown) => void
  ): Promise<void> {
    const [open, close] = isObject ? ["{", "}"] : ["[", "]"];
    let runStart = -1;
    let runEnd = -1;
    const flush = async (): Promise<void> => {
      if (runStart === -1) return;
      await this.account(runEnd - runStart);
      takeRun(this.jsonParse(`${open}${this.text(runStart, runEnd)}${close}`));
      runStart = -1;
    };
    for (const item of this.items(start, end, isObject)) {
      if (item.itemEnd - item.valueStart > this.sliceBytes) {
        await flush();
        takeLarge(item, await this.parse(item.valueStart, item.itemEnd, depth + 1));
        continue;
      }
      if (runStart === -1) runStart = item.itemStart;
      runEnd = item.itemEnd;
      if (runEnd - runStart >= this.sliceBytes) await flush();
    }
    await flush();
  }
}
