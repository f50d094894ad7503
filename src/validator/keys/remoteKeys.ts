import {readFileSync} from "node:fs";
import {join} from "node:path";
import {writeWhole} from "./writeWhole.ts";

/**
 * The remote keys imported through the keymanager API (`POST /eth/v1/remotekeys`), kept in
 * `<data dir>/remote-keys.json` as `[{"pubkey": "0x…", "url": "http://…"}]` and signed with from
 * every start on, until deleted through the API.
 */

export interface RemoteKeyDefinition {
  /** 0x hex, lowercase */
  pubkey: string;
  /** the remote signer's base URL (Web3Signer ETH2 API) */
  url: string;
}

const PUBKEY = /^0x[0-9a-f]{96}$/;

export function remoteKeysFile(dataDir: string): string {
  return join(dataDir, "remote-keys.json");
}

/** A remote signer's URL as given, if it is an http(s) URL; throws naming what is wrong. */
export function remoteSignerUrl(text: string): string {
  if (text === "") throw new Error("none given: a remote key needs its signer's URL");
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`${JSON.stringify(text.slice(0, 200))} is not a URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error(`${JSON.stringify(text.slice(0, 200))} is not an http(s) URL`);
  return text;
}

/** The imported remote keys (none when the file does not exist); throws if the file is not this store's JSON. */
export function readRemoteKeys(dataDir: string): RemoteKeyDefinition[] {
  const file = remoteKeysFile(dataDir);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw e;
  }
  const json = JSON.parse(text) as unknown;
  const valid = Array.isArray(json) && json.every((d) => typeof d?.pubkey === "string" && PUBKEY.test(d.pubkey) && typeof d.url === "string");
  if (!valid) throw new Error(`${file} is not a JSON array of {pubkey, url}`);
  return (json as RemoteKeyDefinition[]).map((d) => ({pubkey: d.pubkey, url: d.url}));
}

export function saveRemoteKeys(dataDir: string, keys: RemoteKeyDefinition[]): Promise<void> {
  return writeWhole(remoteKeysFile(dataDir), JSON.stringify(keys, null, 2) + "\n");
}
