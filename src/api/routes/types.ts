import type {ChainForkConfig} from "@lodestar/config";
import type {JsonPiece} from "../wire.ts";
import type {MaybePromise} from "../../maybePromise.ts";

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
  /** the body may be left out (the spec's `required: false`): `fromJson` then gets undefined */
  optional?: boolean;
  /**
   * present when the route also takes text (the extension endpoints): a `text/plain` body, or a
   * form-encoded one (its field `formField`, else the whole body as sent, which is what `curl -d TEXT` sends)
   */
  text?: {formField: string; fromText(text: string, others: Others): T};
  fromJson(json: unknown, others: Others, config: ChainForkConfig): T;
  /** the same conversion in slices that let the event loop in (lists, whose bodies can hold thousands of items) */
  fromJsonInSlices?(json: unknown, others: Others, config: ChainForkConfig): Promise<T>;
  toJson(value: T, others: Others): unknown;
  /**
   * the JSON body's value depends on its bytes alone and no handler changes it: identical small
   * bodies share one parsed value (server/keptBodies.ts)
   */
  keptByBytes?: boolean;
  /** present when the spec allows `application/octet-stream` request bodies */
  ssz?: {
    deserialize(bytes: Uint8Array, others: Others, config: ChainForkConfig): T;
    serialize(value: T, others: Others): Uint8Array;
  };
}

/** Every argument of a route, keyed by its name in the handler's `args`. */
export type ArgsDef<A> = {[K in keyof A]-?: ParamDef<A[K]> | BodyDef<A[K], Omit<A, K>>};

/**
 * A response body codec; `meta` is the response's metadata (the block's fork, for instance).
 * `S` is what the handler gives (a state's tree view, a lazy list), `D` what the client reads back.
 */
export interface DataCodec<D, M, S = D> {
  toJson(data: S, meta: M): unknown;
  fromJson(json: unknown, meta: M): D;
  /** The JSON text of `toJson(data)`, when the codec can make it faster than JSON.stringify (from texts of shared items) */
  toJsonText?(data: S, meta: M): string;
  /** The same text as UTF-8 bytes, in pieces, from the kept bytes of shared items (undefined when they are not shared) */
  toJsonBytes?(data: S, meta: M): Uint8Array[] | undefined;
  /** Large answers: the JSON text of `toJson(data)`, in pieces the server writes as they come (joined, exactly the same text); undefined for a kept answer, served by toJsonBytes. */
  toJsonChunks?(data: S, meta: M): Iterable<JsonPiece> | undefined;
  /** A list's codec: one item from its JSON, for readers that take a large list item by item (the JSON-RPC layer) */
  itemFromJson?(json: unknown): unknown;
  /** present when the spec allows `application/octet-stream` responses */
  ssz?: {
    serialize(data: S, meta: M): Uint8Array;
    deserialize(bytes: Uint8Array, meta: M): D;
  };
}

/**
 * One metadata value: a top-level JSON key beside `data`, and a response header (SSZ responses carry only headers).
 * Reading an answer, the client takes the JSON key, else the header (nodes built to older spec versions
 * sent some values only one way), else `whenAbsent`; with none of them the answer is refused, naming
 * the field and the route.
 */
export interface MetaField<T> {
  json: string;
  header: string;
  toJson(value: T): unknown;
  fromJson(json: unknown): T;
  toHeader(value: T): string;
  fromHeader(header: string): T;
  /**
   * What an answer that leaves the field out means: present for fields that older spec versions
   * lacked (`finalized`, `execution_optimistic`), so that nodes built to those versions can be read.
   */
  whenAbsent?: {value: T};
}

export type MetaDef<M> = {[K in keyof M]-?: MetaField<M[K]>};

/** No metadata; no arguments. */
export type NoMeta = Record<never, never>;
export type NoArgs = Record<never, never>;

export type ResponseDef<D, M, S = D> =
  /** 200 with no body; the handler returns nothing */
  | {kind: "empty"}
  /** no body; the handler's `data` is the HTTP status (getHealth, publishBlock's 200/202) */
  | {kind: "status"}
  /**
   * `{...meta, data}` as JSON, or SSZ bytes of `data` with meta in headers. `unwrapped`: the JSON
   * body is `data` itself, not inside `{data}` (getDebugForkChoice); for routes without metadata.
   */
  | {kind: "data"; data: DataCodec<D, M, S>; meta: MetaDef<M>; unwrapped?: boolean}
  /** server-sent events (`text/event-stream`): the handler gives an EventSource, the client reads an AsyncIterable */
  | {kind: "events"; event: EventCodec<D extends AsyncIterable<infer E> ? E : never>};

/** One event of an event stream: its name (the SSE `event:` field) and its `data` as JSON. */
export interface EventCodec<E> {
  name(event: E): string;
  toJson(event: E): unknown;
  /** throws on an unknown name or malformed data */
  fromJson(name: string, json: unknown): E;
}

/** What an `events` route's handler gives: `subscribe` starts calling `onEvent` and returns the function that stops it. */
export interface EventSource<E> {
  subscribe(onEvent: (event: E) => void): () => void;
}

/** `D` is the response data as the client reads it, `S` as the handler gives it (see DataCodec). */
export interface RouteDef<A, D, M, S = D> {
  method: HttpMethod;
  /** spec form: `/eth/v1/beacon/states/{state_id}/root` */
  path: string;
  /** the endpoint's own version (the `vN` of its path) */
  version: number;
  /** the spec's tag; "Ext" for the node's own extension endpoints under `/ext/` */
  tag: "Beacon" | "Config" | "Debug" | "Events" | "Ext" | "Node" | "Validator";
  args: ArgsDef<A>;
  response: ResponseDef<D, M, S>;
}

/** A table entry once merged: the record key is the spec's operationId. */
export type Route<A = any, D = any, M = any> = RouteDef<A, D, M> & {operationId: string};

/** What a handler returns, and what the client gives back, for a route. */
export type RouteResult<D, M> = [D] extends [void] ? void : [keyof M] extends [never] ? {data: D} : {data: D; meta: M};

export type ArgsOf<R> = R extends RouteDef<infer A, any, any, any> ? A : never;
export type ResultOf<R> = R extends RouteDef<any, infer D, infer M, any> ? RouteResult<D, M> : never;
/** What the route's handler returns (its data in the server form `S`). */
export type HandlerResultOf<R> = R extends RouteDef<any, any, infer M, infer S> ? RouteResult<S, M> : never;

/**
 * One handler per entry of `T`; a route without a handler is a compile error. A handler returns a
 * promise of its result, or the result itself when it has it at hand.
 */
export type Handlers<T, Ctx> = {[K in keyof T]: (args: ArgsOf<T[K]>, ctx: Ctx) => MaybePromise<HandlerResultOf<T[K]>>};

/** Keeps the literal types of an entry while checking it against RouteDef. */
export function route<A, D = void, M = NoMeta, S = D>(def: RouteDef<A, D, M, S>): RouteDef<A, D, M, S> {
  return def;
}
