import {describe, expect, it} from "@jest/globals";
import {SecretKey} from "@chainsafe/blst";
import {createKeystore, decryptKeystore, normalizePassword, parseKeystore} from "../../../../src/validator/keys/keystore.ts";

/** EIP-2335's own test vectors (ERCS/erc-2335.md, "Test Cases"), copied as the EIP prints them. */
const PASSWORD = "𝔱𝔢𝔰𝔱𝔭𝔞𝔰𝔰𝔴𝔬𝔯𝔡🔑";
const ENCODED_PASSWORD = "7465737470617373776f7264f09f9491";
const SECRET = "000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f";
const PUBKEY = "9612d7a727c9d0a22e185a1c768478dfe919cada9266988cb32359c11f2b7b27f4ae4040902382ae2910c15e2b420d07";
const SALT = "d4e56740f876aef8c010b86a40d5f56745a118d0906a34e69aec8c0db1cb8fa3";
const IV = "264daa3f303d7259501c93d997d84fe6";

const SCRYPT_VECTOR = {
  crypto: {
    kdf: {function: "scrypt", params: {dklen: 32, n: 262144, p: 1, r: 8, salt: SALT}, message: ""},
    checksum: {function: "sha256", params: {}, message: "d2217fe5f3e9a1e34581ef8a78f7c9928e436d36dacc5e846690a5581e8ea484"},
    cipher: {function: "aes-128-ctr", params: {iv: IV}, message: "06ae90d55fe0a6e9c5c3bc5b170827b2e5cce3929ed3f116c2811e6366dfe20f"},
  },
  description: "This is a test keystore that uses scrypt to secure the secret.",
  pubkey: PUBKEY,
  path: "m/12381/60/3141592653/589793238",
  uuid: "1d85ae20-35c5-4611-98e8-aa14a633906f",
  version: 4,
};

const PBKDF2_VECTOR = {
  crypto: {
    kdf: {function: "pbkdf2", params: {dklen: 32, c: 262144, prf: "hmac-sha256", salt: SALT}, message: ""},
    checksum: {function: "sha256", params: {}, message: "8a9f5d9912ed7e75ea794bc5a89bca5f193721d30868ade6f73043c6ea6febf1"},
    cipher: {function: "aes-128-ctr", params: {iv: IV}, message: "cee03fde2af33149775b7223e7845e4fb2c8ae1792e5f99fe9ecf474cc8c16ad"},
  },
  description: "This is a test keystore that uses PBKDF2 to secure the secret.",
  pubkey: PUBKEY,
  path: "m/12381/60/0/0",
  uuid: "64625def-3331-4eea-ab6f-782f3ed16a83",
  version: 4,
};

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString("hex");
const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

describe("EIP-2335 keystores", () => {
  it("normalises the password as the EIP's encoded password (NFKD, control codes stripped)", () => {
    expect(normalizePassword(PASSWORD).toString("hex")).toBe(ENCODED_PASSWORD);
    expect(normalizePassword("\u0000a\u007fb\u0085c\n").toString()).toBe("abc");
    expect(normalizePassword("a b").toString()).toBe("a b");
  });

  it.each([
    ["scrypt", SCRYPT_VECTOR],
    ["pbkdf2", PBKDF2_VECTOR],
  ])("decrypts the %s test vector to its secret, whose public key is the vector's", async (_kdf, vector) => {
    const secret = await decryptKeystore(parseKeystore(vector), PASSWORD);
    expect(hex(secret)).toBe(SECRET);
    expect(hex(SecretKey.fromBytes(secret).toPublicKey().toBytes())).toBe(PUBKEY);
    // the standard scrypt cost (256 MiB, about a second on an idle core): generous on a loaded machine
  }, 30_000);

  it("refuses a wrong password by the checksum", async () => {
    await expect(decryptKeystore(parseKeystore(PBKDF2_VECTOR), "testpassword")).rejects.toThrow("wrong password");
  });

  it("encrypts to the vector's checksum and cipher message with its salt and IV", async () => {
    const made = await createKeystore(Buffer.from(SECRET, "hex"), PASSWORD, Buffer.from(PUBKEY, "hex"), {
      kdf: "pbkdf2",
      salt: Buffer.from(SALT, "hex"),
      iv: Buffer.from(IV, "hex"),
    });
    expect(made.crypto.checksum.message).toBe(PBKDF2_VECTOR.crypto.checksum.message);
    expect(made.crypto.cipher.message).toBe(PBKDF2_VECTOR.crypto.cipher.message);
    expect(made.crypto.kdf).toEqual(PBKDF2_VECTOR.crypto.kdf);
  });

  it("names what is wrong in a corrupt keystore or an unknown function, before any KDF work", async () => {
    const cases: [(k: typeof PBKDF2_VECTOR) => void, string][] = [
      [(k) => (k.version = 3), "version 3 is not 4"],
      [(k) => (k.crypto.kdf.function = "argon2"), 'unknown kdf function "argon2"'],
      [(k) => (k.crypto.cipher.function = "aes-256-gcm"), 'unknown cipher function "aes-256-gcm"'],
      [(k) => (k.crypto.checksum.function = "keccak256"), 'unknown checksum function "keccak256"'],
      [(k) => (k.crypto.cipher.params.iv = "zz"), "cipher iv is not hex"],
      [(k) => ((k.crypto.kdf.params as Record<string, unknown>).prf = "hmac-sha512"), "pbkdf2 prf"],
      [(k) => ((k.crypto.kdf.params as Record<string, unknown>).c = -1), "pbkdf2 c"],
    ];
    for (const [corrupt, message] of cases) {
      const keystore = clone(PBKDF2_VECTOR);
      corrupt(keystore);
      await expect((async () => decryptKeystore(parseKeystore(keystore), PASSWORD))()).rejects.toThrow(message);
    }
    const hugeScrypt = clone(SCRYPT_VECTOR);
    hugeScrypt.crypto.kdf.params.n = 2 ** 24;
    await expect(decryptKeystore(parseKeystore(hugeScrypt), PASSWORD)).rejects.toThrow("MiB");
    expect(() => parseKeystore([])).toThrow("not a JSON object");
    expect(() => parseKeystore({...clone(PBKDF2_VECTOR), crypto: {kdf: {}}})).toThrow("crypto.kdf is not a module");
  });
});
