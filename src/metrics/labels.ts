/**
 * Label values from outside the node (a route's operationId, a JSON-RPC method name, a status)
 * kept to a fixed set: every distinct value is a new time series, so a client sending made-up
 * names must not grow the scrape without bound.
 */
export class BoundedLabel {
  private readonly known: ReadonlySet<string>;
  private readonly other: string;

  constructor(known: Iterable<string>, other: string) {
    this.known = new Set(known);
    this.other = other;
  }

  of(value: string | undefined): string {
    return value !== undefined && this.known.has(value) ? value : this.other;
  }
}

/** An HTTP status as a label: the three digits for 100..599, "other" for anything else. */
export function statusLabel(status: number): string {
  return Number.isInteger(status) && status >= 100 && status <= 599 ? String(status) : "other";
}
