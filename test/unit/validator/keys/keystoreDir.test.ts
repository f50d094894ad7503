import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import {spawn} from "node:child_process";
import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from "node:fs";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {initLogging, parseLogDirective, getLogger} from "../../../../src/log.ts";
import {KeyLoadError, loadStartupKeys} from "../../../../src/validator/keys/loadKeys.ts";
import {KeystoreLock} from "../../../../src/validator/keys/lockFile.ts";
import {interopKeystore, interopPubkey, writeLighthouseLayout} from "../../../keystoreFiles.ts";

/** A pid no process has any more: a child that has exited. */
function deadPid(): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["-e", ""]);
    child.on("exit", () => resolve(child.pid!));
  });
}

describe("keystores from a directory", () => {
  let root: string;
  const log = () => getLogger("validator");
  beforeAll(() => {
    initLogging({directive: parseLogDirective("ERROR"), format: "json"});
    root = mkdtempSync(join(tmpdir(), "keystores-"));
  });
  afterAll(() => rmSync(root, {recursive: true, force: true}));

  it("loads Lighthouse's layout (secrets named by 0x pubkey) and Teku's (name.json with name.txt), and locks each keystore", async () => {
    const dir = join(root, "layouts");
    const {keys, secrets} = await writeLighthouseLayout(dir, [0, 1]);
    // Teku: a flat keystore file, its password named after it
    writeFileSync(join(keys, "validator_2.json"), JSON.stringify(await interopKeystore(2, "teku")));
    writeFileSync(join(secrets, "validator_2.txt"), "teku");
    // the deposit CLI's deposit data beside the keystores is not a keystore
    writeFileSync(join(keys, "deposit_data-1700000000.json"), "[]");

    const loaded = await loadStartupKeys({interopIndices: [], keystoresDir: keys, secretsDir: secrets}, join(dir, "data"), log());
    expect(loaded.keystores.map((k) => k.pubkey).sort()).toEqual([0, 1, 2].map(interopPubkey).sort());
    for (const key of loaded.keystores) {
      expect(readFileSync(`${key.keystorePath}.lock`, "utf8").trim()).toBe(String(process.pid));
      key.lock.release();
      expect(existsSync(`${key.keystorePath}.lock`)).toBe(false);
    }
  });

  it("refuses to start naming each keystore that cannot be used, and holds no lock after; --allow-partial-keys starts with the good ones", async () => {
    const dir = join(root, "bad");
    const {keys, secrets} = await writeLighthouseLayout(dir, [3, 4, 5, 6]);
    writeFileSync(join(secrets, interopPubkey(4)), "not the password");
    const corrupt = join(keys, interopPubkey(5), "voting-keystore.json");
    writeFileSync(corrupt, "{\"version\": 4, \"crypto\":");
    const unknownKdf = join(keys, interopPubkey(6), "voting-keystore.json");
    const keystore = JSON.parse(readFileSync(unknownKdf, "utf8"));
    keystore.crypto.kdf.function = "argon2id";
    writeFileSync(unknownKdf, JSON.stringify(keystore));
    mkdirSync(join(keys, "nopassword"));
    const noPassword = join(keys, "nopassword", "keystore.json");
    writeFileSync(noPassword, JSON.stringify(await interopKeystore(7, "x")));

    const error = await loadStartupKeys({interopIndices: [], keystoresDir: keys, secretsDir: secrets}, join(dir, "data"), log()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KeyLoadError);
    const failures = new Map((error as KeyLoadError).failures.map((f) => [f.file, f.reason]));
    expect(failures.size).toBe(4);
    expect(failures.get(join(keys, interopPubkey(4), "voting-keystore.json"))).toMatch(/wrong password/);
    expect(failures.get(corrupt)).toMatch(/not an EIP-2335 keystore/);
    expect(failures.get(unknownKdf)).toMatch(/unknown kdf function "argon2id"/);
    expect(failures.get(noPassword)).toMatch(/no password file/);
    expect((error as Error).message).toContain(corrupt);
    // nothing kept: the good keystore's lock is gone too
    expect(existsSync(join(keys, interopPubkey(3), "voting-keystore.json.lock"))).toBe(false);

    const partial = await loadStartupKeys({interopIndices: [], keystoresDir: keys, secretsDir: secrets, allowPartialKeys: true}, join(dir, "data"), log());
    expect(partial.keystores.map((k) => k.pubkey)).toEqual([interopPubkey(3)]);
    partial.keystores[0].lock.release();
  });

  it("one password file for all keystores; a key also given as an interop key is refused as a duplicate", async () => {
    const dir = join(root, "shared");
    mkdirSync(dir);
    for (const i of [8, 9]) writeFileSync(join(dir, `k${i}.json`), JSON.stringify(await interopKeystore(i, "same")));
    writeFileSync(join(root, "password.txt"), "same\n");
    const error = await loadStartupKeys({interopIndices: [9], keystoresDir: dir, passwordFile: join(root, "password.txt")}, join(root, "d2"), log()).catch((e: unknown) => e);
    expect((error as KeyLoadError).failures).toEqual([{file: join(dir, "k9.json"), reason: `public key ${interopPubkey(9)} is loaded from another keystore already`}]);
    const loaded = await loadStartupKeys({interopIndices: [], keystoresDir: dir, passwordFile: join(root, "password.txt")}, join(root, "d2"), log());
    expect(loaded.keystores).toHaveLength(2);
    for (const key of loaded.keystores) key.lock.release();
  });

  it("a keystore locked by a live process is refused naming its pid; a dead process's lock is taken over", async () => {
    const keystore = join(root, "locked.json");
    writeFileSync(keystore, "{}");
    const sleeper = spawn(process.execPath, ["-e", "setTimeout(() => {}, 30000)"]);
    try {
      writeFileSync(`${keystore}.lock`, `${sleeper.pid}\n`);
      expect(() => KeystoreLock.acquire(keystore)).toThrow(`in use by process ${sleeper.pid}`);
      expect(readFileSync(`${keystore}.lock`, "utf8").trim()).toBe(String(sleeper.pid));
    } finally {
      sleeper.kill("SIGKILL");
    }
    writeFileSync(`${keystore}.lock`, `${await deadPid()}\n`);
    const lock = KeystoreLock.acquire(keystore);
    expect(readFileSync(`${keystore}.lock`, "utf8").trim()).toBe(String(process.pid));
    lock.release();
    expect(existsSync(`${keystore}.lock`)).toBe(false);
  });
});
