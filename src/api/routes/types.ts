import type {ChainForkConfig} from "@lodestar/config";

/**
 * The shape of one route-table entry. An entry is data: where the route lives (method, path),
 * how each argument travels (path, query, header or body) and how it is parsed and formatted,
 * and how the result and its metadata become JSON, SSZ and headers. The server and the client
 * are both derived from these entries; neither knows any route by itself.
 */

export type HttpMethod = "GET" | "POST";
export type WireFormat = "json" | "ssz";

/** A string-valued argument (path segment, query value(s), header), in both directions. */
export interface ParamCodec<T> {
  /** `raw` holds every occurrence (query values may repeat), undefined when absent. Throws ApiError(400) naming `name`. */
  parse(raw: string[] | undefined, name: string): T;
  /** undefined (or empty) when the value is absent and nothing should be sent. */
  format(value: T): string[] | undefined;
}

export interface ParamDef<T> {
  in: "path" | "query" | "header";
  /** the wire name: `state_id`, `broadcast_validation`, `Eth-Consensus-Version` */
  name: string;
  codec: ParamCodec<T>;
}

/**
 * The request body. `others` are the route's other arguments, already parsed (the fork of a
 * block body comes from the `Eth-Consensus-Version` header, for instance). Parse errors throw.
 */
export interface BodyDef<T, Others> {
  in: "body";
  fromJson(json: unknown, others: Others, config: ChainForkConfig): T;
  toJson(value: T, others: Others): unknown;
  /** present when the spec allows `application/octet-stream` request bodies */
  ssz?: {
    deserialize(bytes: Uint8Array, others: Others, config: ChainForkConfig): T;
    serialize(value: T, others: Others): Uint8Array;
  };
}

/** Every argument of a route, keyed by its name in the handler's `args`. */
export type ArgsDef<A> = {[K in keyof A]-?: ParamDef<A[K]> | BodyDef<A[K], Omit<A, K>>};

/** A response body codec; `meta` is the response's metadata (the block's fork, for instance). */
export interface DataCodec<D, M> {
  toJson(data: D, meta: M): unknown;
  fromJson(json: unknown, meta: M): D;
  /** present when the spec allows `application/octet-stream` responses */
  ssz?: {
    serialize(data: D, meta: M): Uint8Array;
    deserialize(bytes: Uint8Array, meta: M): D;
  };
}

/** One metadata value: a top-level JSON key beside `data`, and a response header (SSZ responses carry only headers). */
export interface MetaField<T> {
  json: string;
  header: string;
  toJson(value: T): unknown;
  fromJson(json: unknown): T;
  toHeader(value: T): string;
  fromHeader(header: string): T;
}

export type MetaDef<M> = {[K in keyof M]-?: MetaField<M[K]>};

/** No metadata; no arguments. */
export type NoMeta = Record<never, never>;
export type NoArgs = Record<never, never>;

export type ResponseDef<D, M> =
  /** 200 with no body; the handler returns nothing */
  | {kind: "empty"}
  /** no body; the handler's `data` is the HTTP status (getHealth, publishBlock's 200/202) */
  | {kind: "status"}
  /** `{...meta, data}` as JSON, or SSZ bytes of `data` with meta in headers */
  | {kind: "data"; data: DataCodec<D, M>; meta: MetaDef<M>};

/**
 * Reserved for the JSON-RPC compatibility layer: the legacy method name and the route
 * arguments its positional params map to, in order. The layer itself lives in compat/.
 */
export interface LegacyDef<A> {
  method: string;
  params: readonly (keyof A)[];
}

export interface RouteDef<A, D, M> {
  method: HttpMethod;
  /** spec form: `/eth/v1/beacon/states/{state_id}/root` */
  path: string;
  /** the endpoint's own version (the `vN` of its path) */
  version: number;
  tag: "Beacon" | "Config" | "Debug" | "Node" | "Validator";
  args: ArgsDef<A>;
  response: ResponseDef<D, M>;
  legacy?: LegacyDef<A>;
}

/** A table entry once merged: the record key is the spec's operationId. */
export type Route<A = any, D = any, M = any> = RouteDef<A, D, M> & {operationId: string};

/** What a handler returns, and what the client gives back, for a route. */
export type RouteResult<D, M> = [D] extends [void] ? void : [keyof M] extends [never] ? {data: D} : {data: D; meta: M};

export type ArgsOf<R> = R extends RouteDef<infer A, any, any> ? A : never;
export type ResultOf<R> = R extends RouteDef<any, infer D, infer M> ? RouteResult<D, M> : never;

/** One handler per entry of `T`; a route without a handler is a compile error. */
export type Handlers<T, Ctx> = {[K in keyof T]: (args: ArgsOf<T[K]>, ctx: Ctx) => Promise<ResultOf<T[K]>>};

/** Keeps the literal types of an entry while checking it against RouteDef. */
export function route<A, D = void, M = NoMeta>(def: RouteDef<A, D, M>): RouteDef<A, D, M> {
  return def;
}
