import {httpTransport} from "../src/api/client.ts";
import {exactIntegers} from "./adapters.ts";
import {LEGACY_CATALOGUE} from "./catalogue.ts";
import {legacyMethods, type LegacyMethod} from "./methods.ts";
import {callLegacyMethod} from "./server.ts";

/**
 * `beacon-gateway compat check --rpc URL --rest URL`: every legacy method through a JSON-RPC
 * endpoint, and its replacement (compat's table: the REST call, and what of its answer is the
 * result) through a REST endpoint, on one pinned state, compared method by method. Integers
 * compare by their digits, so the legacy numbers and REST's decimal strings agree. Two refusals
 * agree when they carry the same REST status.
 */

export interface CheckOptions {
  rpc: string;
  rest: string;
  /** where each line goes */
  print(line: string): void;
}

export type Verdict = {method: string} & ({outcome: "agree"; detail: string} | {outcome: "differ"; detail: string} | {outcome: "skip"; detail: string});

/** An answer of either side: a result, or a refusal (the REST status when there is one). */
type Reply = {result: unknown} | {error: {code: number; message: string; status?: number}};

/** Head-dependent answers can change between the two calls: a difference is asked again this often before it counts. */
const ATTEMPTS = 3;

/** Methods the check does not call, and why. */
const SKIPPED: Record<string, string> = {
  get_v1_validator_block: "needs a RANDAO reveal signed by the slot's proposer",
  debug_getChronosFutures: "lists the node's live tasks, which differ from call to call",
};

/** The extension methods that change the node (the standard ones are the `post_*`). */
const WRITES: ReadonlySet<string> = new Set(["setLogLevel", "setGraffiti"]);

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x);
/** Node 24's exact-number JSON (not yet in TypeScript's lib). */
const {isRawJSON} = JSON as unknown as {isRawJSON(value: unknown): value is {rawJSON: string}};

/** A number's or decimal string's digits, so the two encodings compare equal; undefined for anything else. */
function digits(value: unknown): string | undefined {
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  if (isRawJSON(value)) return value.rawJSON;
  if (typeof value === "string" && /^-?(0|[1-9][0-9]*)$/.test(value)) return value;
  return undefined;
}

function show(value: unknown): string {
  if (isRawJSON(value)) return value.rawJSON;
  const text = JSON.stringify(value, (_k, v: unknown) => (isRawJSON(v) ? Number(v.rawJSON) : v)) ?? "undefined";
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

/** The first place where two answers differ beyond the number encoding: its path and both values; undefined when they agree. */
export function firstDifference(a: unknown, b: unknown, path = "result"): {path: string; a: unknown; b: unknown} | undefined {
  const da = digits(a);
  const db = digits(b);
  if (da !== undefined || db !== undefined) return da === db ? undefined : {path, a, b};
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      if (i >= a.length || i >= b.length) return {path: `${path}.length`, a: a.length, b: b.length};
      const d = firstDifference(a[i], b[i], `${path}[${i}]`);
      if (d) return d;
    }
    return undefined;
  }
  if (isObject(a) && isObject(b) && !isRawJSON(a) && !isRawJSON(b)) {
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const d = firstDifference(a[key], b[key], `${path}.${key}`);
      if (d) return d;
    }
    return undefined;
  }
  return a === b ? undefined : {path, a, b};
}

/** Where two replies differ, as a line's detail; undefined when they agree. */
function compareReplies(rpc: Reply, rest: Reply): string | undefined {
  if ("error" in rpc && "error" in rest) {
    const same = rpc.error.status !== undefined || rest.error.status !== undefined ? rpc.error.status === rest.error.status : rpc.error.code === rest.error.code;
    return same ? undefined : `error: ${rpc.error.status ?? rpc.error.code} ${rpc.error.message} (JSON-RPC) vs ${rest.error.status ?? rest.error.code} ${rest.error.message} (REST)`;
  }
  if ("error" in rpc) return `JSON-RPC refused (${rpc.error.code} ${rpc.error.message}), REST answered ${show((rest as {result: unknown}).result)}`;
  if ("error" in rest) return `REST refused (${rest.error.status ?? rest.error.code} ${rest.error.message}), JSON-RPC answered ${show(rpc.result)}`;
  const d = firstDifference(rpc.result, rest.result);
  return d && `${d.path}: ${show(d.a)} (JSON-RPC) vs ${show(d.b)} (REST)`;
}

async function callRpc(url: string, method: string, params: unknown[]): Promise<Reply> {
  const res = await fetch(url, {method: "POST", headers: {"content-type": "application/json"}, body: JSON.stringify({jsonrpc: "2.0", id: 1, method, params})});
  const text = await res.text();
  let reply: {result?: unknown; error?: {code: number; message: string; data?: {status?: number}}};
  try {
    reply = JSON.parse(text, exactIntegers) as typeof reply;
  } catch {
    return {error: {code: -32700, message: `HTTP ${res.status}: not JSON: ${text.slice(0, 100)}`}};
  }
  if (reply.error) return {error: {code: reply.error.code, message: reply.error.message, status: reply.error.data?.status}};
  return {result: reply.result};
}

async function callRest(method: LegacyMethod, params: unknown[], rest: string): Promise<Reply> {
  try {
    return {result: await callLegacyMethod(method, params, {transport: httpTransport(rest), encoding: "rest", upstream: rest})};
  } catch (e) {
    const error = e as {code: number; message: string; data?: {status?: number}};
    return {error: {code: error.code, message: error.message, status: error.data?.status}};
  }
}

/** What the check asks about: one state, pinned by slot, and values read from the REST side. */
interface Probe {
  slot: number;
  epoch: number;
  pubkey: string;
  peerId: string;
}

async function restData(rest: string, path: string): Promise<any> {
  const res = await fetch(new URL(path, rest));
  if (res.status !== 200) throw new Error(`GET ${path} at ${rest}: HTTP ${res.status}`);
  return ((await res.json()) as {data: unknown}).data;
}

async function readProbe(rest: string): Promise<Probe> {
  const header = await restData(rest, "/eth/v1/beacon/headers/finalized");
  const spec = await restData(rest, "/eth/v1/config/spec");
  const slot = Number(header.header.message.slot);
  const [validator] = await restData(rest, `/eth/v1/beacon/states/${slot}/validators?id=0`);
  const identity = await restData(rest, "/eth/v1/node/identity");
  return {slot, epoch: Math.floor(slot / Number(spec.SLOTS_PER_EPOCH)), pubkey: validator.validator.pubkey, peerId: identity.peer_id};
}

/** The params of a call on the pinned state, by the route argument each fills; undefined when the check cannot make them. */
function paramsFor(method: LegacyMethod, probe: Probe): unknown[] | string {
  if (SKIPPED[method.name]) return SKIPPED[method.name]!;
  if (method.name.startsWith("post_") || WRITES.has(method.name)) return "a write: it would change the node";
  const values: Record<string, unknown> = {
    state_id: probe.slot,
    block_id: probe.slot,
    validator_id: 0,
    id: [0, 1],
    epoch: probe.epoch,
    slot: probe.slot,
    committee_index: 0,
    peer_id: probe.peerId,
    validators: [probe.pubkey],
    attestation_data_root: "0x" + "00".repeat(32),
  };
  const params: unknown[] = [];
  for (const param of method.params) {
    const wire = param.def.in === "body" ? param.name : param.def.name;
    const value = values[wire];
    if (value === undefined) {
      if (param.required) return `needs ${param.name}`;
      break;
    }
    params.push(value);
  }
  return params;
}

/** Runs the check; resolves to the verdicts (the caller exits non-zero when any differs). */
export async function runCheck(opts: CheckOptions): Promise<Verdict[]> {
  const probe = await readProbe(opts.rest);
  opts.print(`comparing ${opts.rpc} (JSON-RPC) with ${opts.rest} (REST) at slot ${probe.slot} (the finalized block)`);
  const verdicts: Verdict[] = [];
  for (const {method: name} of LEGACY_CATALOGUE) {
    const method = legacyMethods.get(name)!;
    const params = paramsFor(method, probe);
    let verdict: Verdict;
    if (typeof params === "string") verdict = {method: name, outcome: "skip", detail: params};
    else {
      let detail: string | undefined;
      for (let i = 0; i < ATTEMPTS; i++) {
        const [rpc, rest] = await Promise.all([callRpc(opts.rpc, name, params), callRest(method, params, opts.rest)]);
        detail = compareReplies(rpc, rest);
        if (detail === undefined) break;
      }
      verdict = detail === undefined ? {method: name, outcome: "agree", detail: ""} : {method: name, outcome: "differ", detail};
    }
    verdicts.push(verdict);
    opts.print(`${verdict.outcome.padEnd(6)} ${name}${verdict.detail ? `: ${verdict.detail}` : ""}`);
  }
  const count = (outcome: Verdict["outcome"]) => verdicts.filter((v) => v.outcome === outcome).length;
  opts.print(`${count("agree")} agree, ${count("differ")} differ, ${count("skip")} skipped`);
  return verdicts;
}
