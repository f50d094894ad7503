/**
 * Handlers of routes the node declines (501, as the spec allows a beacon node for some routes).
 * The server answers them before it reads or parses anything of the request: a 501 does not
 * depend on the body, so a missing or malformed one must not turn it into a 400.
 */

const REASON = Symbol("notImplemented");

type Declining = (() => Promise<never>) & {[REASON]: string};

/** A handler that declines its route with `reason` (the 501's message). */
export function notImplemented(reason: string): () => Promise<never> {
  const handler = (async () => {
    throw new Error(`unreachable: the server answers a declined route before its handler (${reason})`);
  }) as Declining;
  handler[REASON] = reason;
  return handler;
}

/** The reason a handler declines its route, or undefined for a handler that answers. */
export function declinedReason(handler: unknown): string | undefined {
  return typeof handler === "function" ? (handler as Partial<Declining>)[REASON] : undefined;
}
