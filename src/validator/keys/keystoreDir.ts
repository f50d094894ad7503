import {SecretKey} from "@chainsafe/blst";
import {existsSync, readFileSync} from "node:fs";
import {readdir} from "node:fs/promises";
import {availableParallelism} from "node:os";
import {basename, join} from "node:path";
import {decryptKeystore, type KeystoreJson, keystorePubkey, parseKeystore} from "./keystore.ts";
import {KeystoreLock} from "./lockFile.ts";

/**
 * Keystores in a directory, as the established clients lay them out, and their passwords:
 *
 * - keystores: `DIR/<anything>.json`, or one level down, `DIR/<0xpubkey>/voting-keystore.json`
 *   (Lighthouse, Lodestar; Nimbus's `keystore.json` too): every `.json` file there but the
 *   deposit CLI's `deposit_data-*.json`;
 * - passwords: one file for all (`--keystore-password-file`), or in a secrets directory one
 *   file per keystore named by its public key, `0x…` (Lighthouse, Lodestar, Nimbus) or without
 *   the `0x`, else by the keystore's file name with `.txt` for `.json` (Teku).
 *
 * Keystores are decrypted a few at once (the KDF runs on libuv's thread pool), each locked
 * (`<keystore>.lock`) before its decryption. A keystore that cannot be used is reported with
 * its file and reason, and nothing of it is kept (its lock is released).
 */

export interface PasswordSource {
  /** one password file per keystore in this directory */
  secretsDir?: string;
  /** one password for every keystore */
  passwordFile?: string;
}

export interface LoadedKey {
  /** 0x hex, lowercase */
  pubkey: string;
  secretKey: SecretKey;
  keystorePath: string;
  /** the keystore's own password file (a secrets dir's), removed with the key; undefined with a shared password file */
  passwordPath?: string;
  derivationPath: string;
  lock: KeystoreLock;
}

export interface KeyFailure {
  file: string;
  reason: string;
}

export interface LoadResult {
  keys: LoadedKey[];
  failures: KeyFailure[];
}

/** what a keystore file is called when the client writes one (Lighthouse's and Lodestar's name) */
export const KEYSTORE_FILE = "voting-keystore.json";

/** Keystores decrypted at once: the thread pool's threads, at most the cores (scrypt's standard cost takes 256 MiB each). */
export function startupConcurrency(): number {
  const pool = Number(process.env.UV_THREADPOOL_SIZE ?? 4) || 4;
  return Math.max(1, Math.min(pool, availableParallelism()));
}

/** The keystore files of a directory (not recursive beyond one level), sorted. */
export async function findKeystoreFiles(dir: string): Promise<string[]> {
  const isKeystoreName = (name: string): boolean => name.endsWith(".json") && !name.startsWith("deposit_data");
  const entries = await readdir(dir, {withFileTypes: true});
  const out = entries.filter((e) => e.isFile() && isKeystoreName(e.name)).map((e) => join(dir, e.name));
  // the keys' own directories, read together (one after the other, 1,000 of them took seconds)
  const inner = await Promise.all(
    entries.filter((e) => e.isDirectory()).map(async (e) => (await readdir(join(dir, e.name), {withFileTypes: true})).filter((f) => f.isFile() && isKeystoreName(f.name)).map((f) => join(dir, e.name, f.name)))
  );
  out.push(...inner.flat());
  return out.sort();
}

/** Where a keystore's password is, or an error saying where it was looked for. */
export function passwordPathOf(keystorePath: string, pubkey: string | undefined, source: PasswordSource): string {
  if (source.passwordFile !== undefined) return source.passwordFile;
  const dir = source.secretsDir;
  if (dir === undefined) throw new Error("no password source (--secrets or --keystore-password-file)");
  const candidates = [...(pubkey ? [pubkey, pubkey.slice(2)] : []), basename(keystorePath).replace(/\.json$/, ".txt")].map((name) => join(dir, name));
  const found = candidates.find((path) => existsSync(path));
  if (found === undefined) throw new Error(`no password file: looked for ${candidates.join(", ")}`);
  return found;
}

/** Runs `task` on every item with at most `concurrency` running at once. */
export async function mapConcurrent<T, R>(items: T[], concurrency: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await task(items[i]);
    }
  };
  await Promise.all(Array.from({length: Math.min(concurrency, items.length)}, worker));
  return out;
}

/**
 * The secret key of a parsed keystore with its password: the secret must be a BLS secret key
 * whose public key is the keystore's. Throws with the reason.
 */
export async function unlockKeystore(keystore: KeystoreJson, password: string): Promise<{secretKey: SecretKey; pubkey: string}> {
  const secret = await decryptKeystore(keystore, password);
  let secretKey: SecretKey;
  try {
    secretKey = SecretKey.fromBytes(secret);
  } catch {
    throw new Error("the decrypted secret is not a BLS12-381 secret key");
  }
  const pubkey = "0x" + Buffer.from(secretKey.toPublicKey().toBytes()).toString("hex");
  const named = keystorePubkey(keystore);
  if (named !== undefined && named !== pubkey) throw new Error(`the secret's public key is ${pubkey}, the keystore names ${named}`);
  return {secretKey, pubkey};
}

async function loadOne(path: string, source: PasswordSource): Promise<LoadedKey | KeyFailure> {
  let lock: KeystoreLock | undefined;
  try {
    let keystore: KeystoreJson;
    // read at once (a keystore is about 1 KB, its password less): through the thread pool, each
    // read is several round trips, which made loading 1,000 keystores 3 times slower than their KDF
    try {
      keystore = parseKeystore(JSON.parse(readFileSync(path, "utf8")));
    } catch (e) {
      throw new Error(`not an EIP-2335 keystore: ${(e as Error).message}`);
    }
    const passwordPath = passwordPathOf(path, keystorePubkey(keystore), source);
    const password = readFileSync(passwordPath, "utf8");
    lock = KeystoreLock.acquire(path);
    const {secretKey, pubkey} = await unlockKeystore(keystore, password);
    return {pubkey, secretKey, keystorePath: path, passwordPath: source.secretsDir !== undefined ? passwordPath : undefined, derivationPath: keystore.path, lock};
  } catch (e) {
    lock?.release();
    return {file: path, reason: (e as Error).message};
  }
}

/**
 * Loads every keystore of `dir` (which must exist) with passwords from `source`. Keys are
 * returned in file order; a pubkey already in `known` or earlier in the directory is a failure.
 */
export async function loadKeystoreDir(dir: string, source: PasswordSource, known: Set<string>, concurrency = startupConcurrency()): Promise<LoadResult> {
  let files: string[];
  try {
    files = await findKeystoreFiles(dir);
  } catch (e) {
    return {keys: [], failures: [{file: dir, reason: `cannot read the directory: ${(e as Error).message}`}]};
  }
  const results = await mapConcurrent(files, concurrency, (file) => loadOne(file, source));
  const keys: LoadedKey[] = [];
  const failures: KeyFailure[] = [];
  for (const result of results) {
    if ("reason" in result) failures.push(result);
    else if (known.has(result.pubkey)) {
      result.lock.release();
      failures.push({file: result.keystorePath, reason: `public key ${result.pubkey} is loaded from another keystore already`});
    } else {
      known.add(result.pubkey);
      keys.push(result);
    }
  }
  return {keys, failures};
}
