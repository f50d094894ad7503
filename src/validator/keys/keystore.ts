import {createCipheriv, createDecipheriv, createHash, pbkdf2, randomBytes, randomUUID, scrypt, timingSafeEqual} from "node:crypto";
import {promisify} from "node:util";

/**
 * EIP-2335 (BLS12-381 keystore, version 4): the secret's decryption and, for tests, benches and
 * tools, its encryption. The key derivation (scrypt or PBKDF2-SHA-256) runs on libuv's thread
 * pool (node:crypto's async forms), never on the event loop; the checksum (SHA-256) and the
 * cipher (AES-128-CTR) are a few microseconds.
 *
 * Every refusal is a KeystoreError whose message says what is wrong; the caller adds the file.
 */

export class KeystoreError extends Error {}

export interface KeystoreModule {
  function: string;
  params: Record<string, unknown>;
  message: string;
}

export interface KeystoreJson {
  version: number;
  uuid: string;
  path: string;
  pubkey?: string;
  description?: string;
  crypto: {kdf: KeystoreModule; checksum: KeystoreModule; cipher: KeystoreModule};
}

const scryptAsync = promisify(scrypt) as (password: Uint8Array, salt: Uint8Array, keylen: number, opts: {N: number; r: number; p: number; maxmem: number}) => Promise<Buffer>;
const pbkdf2Async = promisify(pbkdf2);

/** the largest work a keystore may ask of the KDF: scrypt memory (the standard n=2^18, r=8 takes 256 MiB) and PBKDF2 rounds */
const MAX_SCRYPT_BYTES = 1024 * 1024 * 1024;
const MAX_PBKDF2_ROUNDS = 100_000_000;

/** The password as EIP-2335 hashes it: NFKD, without the C0, C1 and Delete control codes, UTF-8. */
export function normalizePassword(password: string): Buffer {
  // eslint-disable-next-line no-control-regex
  return Buffer.from(password.normalize("NFKD").replace(/[\u0000-\u001f\u007f-\u009f]/g, ""), "utf8");
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function hexField(value: unknown, what: string, bytes?: number): Buffer {
  if (typeof value !== "string" || !/^(0x)?([0-9a-fA-F]{2})*$/.test(value)) throw new KeystoreError(`${what} is not hex`);
  const buf = Buffer.from(value.replace(/^0x/, ""), "hex");
  if (bytes !== undefined && buf.length !== bytes) throw new KeystoreError(`${what} is ${buf.length} bytes, not ${bytes}`);
  return buf;
}

function positiveInt(value: unknown, what: string, max: number): number {
  if (!Number.isSafeInteger(value) || (value as number) < 1 || (value as number) > max) throw new KeystoreError(`${what} is not a whole number in 1..${max}`);
  return value as number;
}

function module(crypto: Record<string, unknown>, name: string): KeystoreModule {
  const m = crypto[name];
  if (!isObject(m) || typeof m.function !== "string" || !isObject(m.params) || typeof m.message !== "string") {
    throw new KeystoreError(`crypto.${name} is not a module (function, params, message)`);
  }
  return m as unknown as KeystoreModule;
}

/** Checks the keystore's shape (version 4, the three modules, a pubkey); throws KeystoreError. */
export function parseKeystore(json: unknown): KeystoreJson {
  if (!isObject(json)) throw new KeystoreError("not a JSON object");
  if (json.version !== 4) throw new KeystoreError(`version ${JSON.stringify(json.version)} is not 4`);
  if (!isObject(json.crypto)) throw new KeystoreError("no crypto object");
  for (const name of ["kdf", "checksum", "cipher"]) module(json.crypto, name);
  if (typeof json.uuid !== "string") throw new KeystoreError("no uuid");
  if (typeof json.path !== "string") throw new KeystoreError("no path");
  if (json.pubkey !== undefined) hexField(json.pubkey, "pubkey", 48);
  return json as unknown as KeystoreJson;
}

/** The keystore's public key as 0x hex (lowercase), or undefined when it names none. */
export function keystorePubkey(keystore: KeystoreJson): string | undefined {
  return keystore.pubkey === undefined ? undefined : "0x" + keystore.pubkey.replace(/^0x/, "").toLowerCase();
}

async function deriveKey(kdf: KeystoreModule, password: Buffer): Promise<Buffer> {
  const p = kdf.params;
  const dklen = positiveInt(p.dklen, "kdf dklen", 1024);
  if (dklen < 32) throw new KeystoreError(`kdf dklen ${dklen} is under 32 (the checksum takes bytes 16..31)`);
  const salt = hexField(p.salt, "kdf salt");
  if (kdf.function === "scrypt") {
    const n = positiveInt(p.n, "scrypt n", 2 ** 30);
    const r = positiveInt(p.r, "scrypt r", 1024);
    const par = positiveInt(p.p, "scrypt p", 1024);
    if ((n & (n - 1)) !== 0 || n < 2) throw new KeystoreError(`scrypt n ${n} is not a power of 2`);
    const memory = 128 * r * (n + par + 2);
    if (memory > MAX_SCRYPT_BYTES) throw new KeystoreError(`scrypt n ${n}, r ${r}, p ${par} would take ${Math.round(memory / 2 ** 20)} MiB`);
    return scryptAsync(password, salt, dklen, {N: n, r, p: par, maxmem: memory + 1024 * 1024});
  }
  if (kdf.function === "pbkdf2") {
    if (p.prf !== "hmac-sha256") throw new KeystoreError(`pbkdf2 prf ${JSON.stringify(p.prf)} is not hmac-sha256`);
    const c = positiveInt(p.c, "pbkdf2 c", MAX_PBKDF2_ROUNDS);
    return pbkdf2Async(password, salt, c, dklen, "sha256");
  }
  throw new KeystoreError(`unknown kdf function ${JSON.stringify(kdf.function)} (scrypt, pbkdf2)`);
}

/**
 * The secret a keystore holds, given its password. Refused (KeystoreError): an unknown
 * function, bad parameters, and a wrong password (the checksum does not match).
 */
export async function decryptKeystore(keystore: KeystoreJson, password: string): Promise<Uint8Array> {
  const {kdf, checksum, cipher} = keystore.crypto;
  // checked before the KDF's work: an unknown checksum or cipher fails at once
  if (checksum.function !== "sha256") throw new KeystoreError(`unknown checksum function ${JSON.stringify(checksum.function)} (sha256)`);
  if (cipher.function !== "aes-128-ctr") throw new KeystoreError(`unknown cipher function ${JSON.stringify(cipher.function)} (aes-128-ctr)`);
  const iv = hexField(cipher.params.iv, "cipher iv", 16);
  const cipherMessage = hexField(cipher.message, "cipher message");
  const expected = hexField(checksum.message, "checksum message", 32);
  const key = await deriveKey(kdf, normalizePassword(password));
  const actual = createHash("sha256").update(key.subarray(16, 32)).update(cipherMessage).digest();
  if (!timingSafeEqual(actual, expected)) throw new KeystoreError("wrong password (the checksum does not match)");
  const decipher = createDecipheriv("aes-128-ctr", key.subarray(0, 16), iv);
  return new Uint8Array(Buffer.concat([decipher.update(cipherMessage), decipher.final()]));
}

export interface KeystoreCreation {
  kdf: "scrypt" | "pbkdf2";
  /** scrypt n or pbkdf2 c; the EIP's 262144 by default */
  cost?: number;
  path?: string;
  salt?: Uint8Array;
  iv?: Uint8Array;
  uuid?: string;
  description?: string;
}

/** Encrypts a secret into an EIP-2335 keystore (for the benches, tests and tools that make keystores). */
export async function createKeystore(secret: Uint8Array, password: string, pubkey: Uint8Array, opts: KeystoreCreation): Promise<KeystoreJson> {
  const salt = Buffer.from(opts.salt ?? randomBytes(32)).toString("hex");
  const cost = opts.cost ?? 262144;
  const kdf: KeystoreModule =
    opts.kdf === "scrypt"
      ? {function: "scrypt", params: {dklen: 32, n: cost, r: 8, p: 1, salt}, message: ""}
      : {function: "pbkdf2", params: {dklen: 32, c: cost, prf: "hmac-sha256", salt}, message: ""};
  const key = await deriveKey(kdf, normalizePassword(password));
  const iv = Buffer.from(opts.iv ?? randomBytes(16));
  const encryptor = createCipheriv("aes-128-ctr", key.subarray(0, 16), iv);
  const cipherMessage = Buffer.concat([encryptor.update(secret), encryptor.final()]);
  const checksum = createHash("sha256").update(key.subarray(16, 32)).update(cipherMessage).digest();
  return {
    crypto: {
      kdf,
      checksum: {function: "sha256", params: {}, message: checksum.toString("hex")},
      cipher: {function: "aes-128-ctr", params: {iv: iv.toString("hex")}, message: cipherMessage.toString("hex")},
    },
    ...(opts.description !== undefined ? {description: opts.description} : {}),
    pubkey: Buffer.from(pubkey).toString("hex"),
    path: opts.path ?? "",
    uuid: opts.uuid ?? randomUUID(),
    version: 4,
  };
}
