import {spawn} from "node:child_process";
import {fileURLToPath} from "node:url";

/**
 * Talking JSON-RPC over HTTP, and comparing a legacy-encoded result with the REST answer it
 * came from: numbers are read with their exact digits, so a uint64 above 2^53 is checked as written.
 */

export interface HttpReply {
  status: number;
  text: string;
}

/** POSTs a JSON-RPC request (an object is serialized; a string is sent as it is). */
export async function postRpc(url: string, request: unknown, contentType = "application/json"): Promise<HttpReply> {
  const body = typeof request === "string" ? request : JSON.stringify(request);
  const res = await fetch(url, {method: "POST", headers: {"content-type": contentType}, body});
  return {status: res.status, text: await res.text()};
}

/** A JSON number as written in a reply: its exact text. */
export class JsonNumber {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

/** Parses a reply keeping every number's exact text (JsonNumber), as a uint64-aware reader would. */
export function parseExact(text: string): any {
  return JSON.parse(text, (_key, value, context?: {source?: string}) => (typeof value === "number" ? new JsonNumber(context!.source!) : value));
}

/** Plain JSON again (JsonNumbers as numbers), for messages and simple checks. */
export function plain(value: unknown): any {
  if (value instanceof JsonNumber) return Number(value.text);
  if (Array.isArray(value)) return value.map(plain);
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  return value;
}

const DECIMAL = /^(0|[1-9][0-9]*)$/;

export interface Comparison {
  /** where the legacy result and the REST data differ beyond the encoding change */
  differences: string[];
  /** where an integer of REST (a decimal string) is still a string in the legacy result */
  unconverted: string[];
}

/**
 * Compares a legacy result (parsed with parseExact) with the REST data: equal when, position by
 * position, a REST decimal string is a JSON number with the same digits, and all else is the same.
 */
export function compareLegacy(legacy: unknown, rest: unknown, path = "result"): Comparison {
  const out: Comparison = {differences: [], unconverted: []};
  const walk = (l: unknown, r: unknown, at: string): void => {
    if (l instanceof JsonNumber) {
      const same = typeof r === "string" ? DECIMAL.test(r) && l.text === r : typeof r === "number" && Number(l.text) === r;
      if (!same) out.differences.push(`${at}: ${l.text} vs REST ${JSON.stringify(r)}`);
    } else if (Array.isArray(l) && Array.isArray(r)) {
      if (l.length !== r.length) out.differences.push(`${at}: ${l.length} items vs REST ${r.length}`);
      else l.forEach((item, i) => walk(item, r[i], `${at}[${i}]`));
    } else if (isObject(l) && isObject(r)) {
      const keys = new Set([...Object.keys(l), ...Object.keys(r)]);
      for (const k of keys) {
        if (!(k in l) || !(k in r)) out.differences.push(`${at}.${k}: present on one side only`);
        else walk(l[k], r[k], `${at}.${k}`);
      }
    } else if (l !== r) {
      out.differences.push(`${at}: ${JSON.stringify(l)} vs REST ${JSON.stringify(r)}`);
    } else if (typeof r === "string" && DECIMAL.test(r)) {
      out.unconverted.push(at);
    }
  };
  walk(legacy, rest, path);
  return out;
}

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x);

const BIN = fileURLToPath(new URL("../../bin/beacon-gateway.js", import.meta.url));

/** Runs `beacon-gateway compat check --rpc RPC --rest REST` to its end: its exit code and its output. */
export function runCompatCheck(rpc: string, rest: string): Promise<{code: number | null; stdout: string; stderr: string}> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, [BIN, "compat", "check", "--rpc", rpc, "--rest", rest], {stdio: ["ignore", "pipe", "pipe"]});
    let stdout = "";
    let stderr = "";
    proc.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    proc.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    proc.on("exit", (code) => resolve({code, stdout, stderr}));
  });
}
