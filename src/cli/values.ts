import {ENR} from "@chainsafe/enr";
import {peerIdFromString} from "@libp2p/peer-id";
import {multiaddr} from "@multiformats/multiaddr";
import {accessSync, constants, statSync} from "node:fs";
import {isIP, isIPv4} from "node:net";
import {DEV_FORKS, type DevFork} from "../config/forks.ts";
import {graffitiFromText} from "../graffiti.ts";
import {parseLogDirective, type LogDirective} from "../log.ts";
import {InvalidValue} from "./optionTable.ts";

/**
 * Parsers of option values. Each throws InvalidValue with the reason; the option table puts
 * the option's name in front. (No lodestar imports: the command line is parsed before the
 * consensus preset is fixed.)
 */

export function integer(text: string, min: number, max: number): number {
  if (!/^\d+$/.test(text)) throw new InvalidValue(`"${text}" is not a whole number`);
  const n = Number(text);
  if (n < min || n > max) throw new InvalidValue(`${n} is out of range (${min}..${max})`);
  return n;
}

export const port = (text: string): number => integer(text, 0, 65535);

/** One of a few words: `"x" is not minimal or mainnet`. */
export function oneOf<T extends string>(text: string, choices: readonly T[]): T {
  if ((choices as readonly string[]).includes(text)) return text as T;
  throw new InvalidValue(`"${text}" is not ${choices.slice(0, -1).join(", ")} or ${choices.at(-1)}`);
}

/** `--wss-checkpoint`: `0x<block root>:<epoch>` (Lighthouse's and Lodestar's form); the root in lower case. */
export function wssCheckpoint(text: string): {root: string; epoch: number} {
  const m = /^(0x[0-9a-fA-F]{64}):(\d+)$/.exec(text.trim());
  if (!m) throw new InvalidValue(`"${text}" is not BLOCK_ROOT:EPOCH (a 0x-prefixed 32-byte hex root, a colon, an epoch number)`);
  const epoch = Number(m[2]);
  if (!Number.isSafeInteger(epoch)) throw new InvalidValue(`epoch ${m[2]} is too large`);
  return {root: m[1].toLowerCase(), epoch};
}

/** "0..31,40" → [0..31, 40]; "all" → 0..count-1; "none" → []. */
export function parseIndexRange(text: string, count: number): number[] {
  if (text === "all") return Array.from({length: count}, (_, i) => i);
  if (text === "none") return [];
  const out = new Set<number>();
  for (const part of text.split(",")) {
    const m = /^(\d+)(?:\.\.(\d+))?$/.exec(part.trim());
    if (!m) throw new InvalidValue(`"${part}" is not an index or a range like 0..31`);
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    if (to < from) throw new InvalidValue(`range ${part} ends before it starts`);
    for (let i = from; i <= to; i++) out.add(i);
  }
  return [...out].sort((a, b) => a - b);
}

export function devFork(text: string): DevFork {
  if (!(DEV_FORKS as readonly string[]).includes(text)) throw new InvalidValue(`unknown fork "${text}" (${DEV_FORKS.join(", ")})`);
  return text as DevFork;
}

/** "altair=1,bellatrix=2" → {altair: 1, bellatrix: 2} */
export function forkEpochs(text: string | undefined): Partial<Record<DevFork, number>> {
  if (text === undefined) return {};
  const out: Partial<Record<DevFork, number>> = {};
  for (const part of text.split(",")) {
    const m = /^([a-z0-9]+)=(\d+)$/.exec(part.trim());
    if (!m) throw new InvalidValue(`"${part}" is not FORK=EPOCH`);
    const fork = m[1] as DevFork;
    if (!DEV_FORKS.includes(fork) || fork === "phase0") throw new InvalidValue(`unknown fork "${m[1]}" (altair..fulu)`);
    out[fork] = Number(m[2]);
  }
  return out;
}

export function logDirective(text: string): LogDirective {
  try {
    return parseLogDirective(text);
  } catch (e) {
    throw new InvalidValue((e as Error).message);
  }
}

/** Graffiti text is kept as given; this checks it fits (the node converts it). */
export function graffiti(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  try {
    graffitiFromText(text);
  } catch (e) {
    throw new InvalidValue((e as Error).message);
  }
  return text;
}

/** A listen address of the REST or JSON-RPC server: an IP address or localhost. */
export function serverAddress(text: string): string {
  if (!/^[0-9a-fA-F.:]+$|^localhost$/.test(text)) throw new InvalidValue(`"${text}" is not an IP address`);
  return text;
}

export function ipAddress(text: string): string {
  if (isIP(text) === 0) throw new InvalidValue(`"${text}" is not an IP address`);
  return text;
}

export function ipv4Address(text: string | undefined): string | undefined {
  if (text !== undefined && !isIPv4(text)) throw new InvalidValue(`"${text}" is not an IPv4 address`);
  return text;
}

export function url(text: string): string {
  try {
    new URL(text);
  } catch {
    throw new InvalidValue(`"${text}" is not a URL`);
  }
  return text;
}

export function httpUrl(text: string): string {
  const protocol = new URL(url(text)).protocol;
  if (protocol !== "http:" && protocol !== "https:") throw new InvalidValue(`"${text}" is not an http(s) URL`);
  return text;
}

/** A file the node will read: it must exist and be readable now, so a typo fails at once. */
export function readableFile(text: string): string {
  try {
    if (!statSync(text).isFile()) throw new Error("not a file");
    accessSync(text, constants.R_OK);
  } catch (e) {
    const reason = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
    throw new InvalidValue(`cannot read "${text}" (${reason})`);
  }
  return text;
}

const shorten = (text: string): string => (text.length > 40 ? `${text.slice(0, 40)}…` : text);

/** Signed ENRs as text (`enr:…`), comma-separated in each occurrence; each must decode and verify. */
export function enrList(texts: string[]): string[] {
  const records = texts.flatMap((text) => text.split(",")).map((t) => t.trim()).filter((t) => t !== "");
  for (const record of records) {
    try {
      ENR.decodeTxt(record);
    } catch (e) {
      throw new InvalidValue(`"${shorten(record)}" is not a valid ENR (${(e as Error).message})`);
    }
  }
  return records;
}

/** A peer's TCP multiaddr, `/ip4/ADDR/tcp/PORT`, optionally ending in `/p2p/PEER_ID`. */
export function tcpMultiaddr(text: string): string {
  let names: string[];
  let peerId: string | undefined;
  try {
    const components = multiaddr(text).getComponents();
    names = components.map((c) => c.name);
    peerId = components.find((c) => c.name === "p2p")?.value;
  } catch (e) {
    throw new InvalidValue(`"${text}" is not a multiaddr (${(e as Error).message})`);
  }
  const host = names[0];
  if (!["ip4", "ip6", "dns", "dns4", "dns6"].includes(host) || names[1] !== "tcp" || names.length > 3 || (names.length === 3 && names[2] !== "p2p")) {
    throw new InvalidValue(`"${text}" is not /ip4/ADDR/tcp/PORT, optionally followed by /p2p/PEER_ID`);
  }
  if (peerId !== undefined) {
    try {
      peerIdFromString(peerId);
    } catch {
      throw new InvalidValue(`"${text}" ends in "${peerId}", which is not a peer id`);
    }
  }
  return text;
}
