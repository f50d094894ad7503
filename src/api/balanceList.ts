import type {ValidatorBalance} from "./routes/states.ts";
import {type AsciiWriter, PIECE_CHARS, writtenList} from "./asciiJson.ts";

const ITEM_OPEN = Buffer.from('{"index":"', "latin1");
const ITEM_MIDDLE = Buffer.from('","balance":"', "latin1");
const ITEM_CLOSE = Buffer.from('"}', "latin1");

/**
 * Validators' balances as two columns, the balances routes' answer: it iterates as
 * `{index, balance}` items (for SSZ and in-process callers), and writes its JSON text digit by
 * digit, a million balances in tens of milliseconds where an object and a string per item
 * took hundreds.
 */
export class BalanceList implements Iterable<ValidatorBalance> {
  readonly balances: ArrayLike<number>;
  /** `indices[i]`'s balance is `balances[i]`; without indices, the index of `balances[i]` is i */
  readonly indices?: ArrayLike<number>;

  constructor(balances: ArrayLike<number>, indices?: ArrayLike<number>) {
    this.balances = balances;
    this.indices = indices;
  }

  static of(items: Iterable<ValidatorBalance>): BalanceList {
    if (items instanceof BalanceList) return items;
    const list = Array.from(items);
    return new BalanceList(
      list.map((b) => b.balance),
      list.map((b) => b.index)
    );
  }

  *[Symbol.iterator](): Iterator<ValidatorBalance> {
    for (let i = 0; i < this.balances.length; i++) yield {index: this.indices ? this.indices[i] : i, balance: this.balances[i]};
  }

  /** `JSON.stringify` of the list's ssz toJson, in pieces of about `pieceChars` characters. */
  jsonPieces(pieceChars = PIECE_CHARS): Iterable<Uint8Array> {
    const {balances, indices} = this;
    const write = (out: AsciiWriter, i: number): void => {
      out.ascii(ITEM_OPEN);
      out.uint(indices ? indices[i] : i);
      out.ascii(ITEM_MIDDLE);
      out.uint(balances[i]);
      out.ascii(ITEM_CLOSE);
    };
    return writtenList(positions(balances.length), write, pieceChars);
  }
}

function* positions(count: number): Generator<number> {
  for (let i = 0; i < count; i++) yield i;
}
