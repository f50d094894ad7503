/**
 * Finds the route of a request path: the route table compiled once into a tree of path segments.
 * A literal segment wins over a `{param}` at the same place (`/blocks/head` before `/blocks/{id}`),
 * one trailing slash is ignored, and a parameter never matches an empty segment. Parameter values
 * are percent-decoded; one that cannot be decoded is reported, not thrown.
 */

interface Segment<R> {
  literal: Map<string, Segment<R>>;
  param?: Segment<R>;
  /** the routes that end here, by method, with the names of the parameters on their way */
  ends: Map<string, {route: R; paramNames: string[]}>;
}

export type RouteMatch<R> =
  | {route: R; params: Record<string, string>}
  /** the path has a route, not for this method */
  | {route: undefined; methods: string[]}
  | {route: undefined; badParam: string}
  | undefined;

function emptySegment<R>(): Segment<R> {
  return {literal: new Map(), ends: new Map()};
}

/** Paths matched before, per method: a client asks the same few paths again and again. */
const MAX_RECENT_PATHS = 1024;
/** longer paths are matched each time: kept, a flood of them could hold 1,024 request lines' worth */
const MAX_RECENT_PATH_LENGTH = 256;

export class Router<R> {
  private readonly root = emptySegment<R>();
  private readonly recent = new Map<string, Map<string, RouteMatch<R>>>();

  /** `path` as in the route table: `/eth/v1/beacon/states/{state_id}/root`. */
  add(method: string, path: string, route: R): void {
    let at = this.root;
    const paramNames: string[] = [];
    for (const part of path.split("/").slice(1)) {
      const param = /^\{(\w+)\}$/.exec(part);
      if (param) {
        paramNames.push(param[1]);
        at = at.param ??= emptySegment();
      } else {
        let next = at.literal.get(part);
        if (!next) at.literal.set(part, (next = emptySegment()));
        at = next;
      }
    }
    if (at.ends.has(method)) throw new Error(`Two routes for ${method} ${path}`);
    at.ends.set(method, {route, paramNames});
  }

  /**
   * The route for `method` and `path` (the URL's path, still percent-encoded, without the query).
   * A path matched before gets the same answer (its params frozen): a bounded number of paths is kept,
   * and a flood of distinct ones clears them.
   */
  match(method: string, path: string): RouteMatch<R> {
    let recent = this.recent.get(method);
    const known = recent?.get(path);
    if (known !== undefined) return known;
    const found = this.matchPath(method, path);
    if (found === undefined || path.length > MAX_RECENT_PATH_LENGTH) return found;
    if (!recent) this.recent.set(method, (recent = new Map()));
    if (recent.size >= MAX_RECENT_PATHS) recent.clear();
    recent.set(path, found);
    return found;
  }

  private matchPath(method: string, path: string): RouteMatch<R> {
    const trimmed = path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
    const parts = trimmed.split("/");
    if (parts[0] !== "") return undefined;
    const values: string[] = [];
    const end = this.find(this.root, parts, 1, values);
    if (!end) return undefined;
    const found = end.ends.get(method);
    if (!found) return {route: undefined, methods: [...end.ends.keys()]};
    const params: Record<string, string> = {};
    for (let i = 0; i < values.length; i++) {
      try {
        params[found.paramNames[i]] = decodeURIComponent(values[i]);
      } catch {
        return {route: undefined, badParam: found.paramNames[i]};
      }
    }
    return {route: found.route, params: Object.freeze(params)};
  }

  /** The segment where `parts[i..]` ends with some route, literals tried first; `values` gets the parameters on the way. */
  private find(at: Segment<R>, parts: string[], i: number, values: string[]): Segment<R> | undefined {
    if (i === parts.length) return at.ends.size > 0 ? at : undefined;
    const part = parts[i];
    const literal = at.literal.get(part);
    if (literal) {
      const found = this.find(literal, parts, i + 1, values);
      if (found) return found;
    }
    if (at.param && part !== "") {
      values.push(part);
      const found = this.find(at.param, parts, i + 1, values);
      if (found) return found;
      values.pop();
    }
    return undefined;
  }
}
