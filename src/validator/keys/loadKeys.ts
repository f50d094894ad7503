import {existsSync} from "node:fs";
import {interopSecretKey} from "@lodestar/state-transition";
import type {TopicLogger} from "../../log.ts";
import {type KeyFailure, type LoadedKey, loadKeystoreDir} from "./keystoreDir.ts";
import {importedKeystoresDir, importedSecretsDir} from "./validatorKeys.ts";
import type {SecretKey} from "@chainsafe/blst";

/** Where a validator client's keys come from (the `--interop-indices`, `--keystores`… options). */
export interface KeySourceOptions {
  /** interop (mock-genesis) key indices */
  interopIndices: number[];
  keystoresDir?: string;
  /** with keystoresDir: one password file per keystore, named by its pubkey */
  secretsDir?: string;
  /** with keystoresDir: one password for all */
  passwordFile?: string;
  /** start with the keystores that loaded when others did not (else refuse to start) */
  allowPartialKeys?: boolean;
}

export interface StartupKeys {
  interop: {pubkey: string; secretKey: SecretKey}[];
  keystores: LoadedKey[];
}

/** The keystores that could not be used, one line each; the client does not start. */
export class KeyLoadError extends Error {
  readonly failures: KeyFailure[];
  constructor(failures: KeyFailure[]) {
    super(
      `${failures.length} keystore${failures.length === 1 ? "" : "s"} could not be used (start with the others: --allow-partial-keys):\n` +
        failures.map((f) => `  ${f.file}: ${f.reason}`).join("\n")
    );
    this.failures = failures;
    this.name = "KeyLoadError";
  }
}

/**
 * The keys a validator client starts with: the interop keys, the keystores of `--keystores`,
 * and those imported earlier through the keymanager API (`<data dir>/keystores`). A key found
 * twice is a failure. Refuses (KeyLoadError, every lock released) when any keystore fails,
 * unless `allowPartialKeys`: then each failure is logged and the good keys are used.
 */
export async function loadStartupKeys(opts: KeySourceOptions, dataDir: string, log: TopicLogger): Promise<StartupKeys> {
  const interop = opts.interopIndices.map((i) => {
    const secretKey = interopSecretKey(i);
    return {pubkey: "0x" + Buffer.from(secretKey.toPublicKey().toBytes()).toString("hex"), secretKey};
  });
  const known = new Set(interop.map((k) => k.pubkey));
  const keystores: LoadedKey[] = [];
  const failures: KeyFailure[] = [];
  const sources: {dir: string; secretsDir?: string; passwordFile?: string}[] = [];
  if (opts.keystoresDir !== undefined) sources.push({dir: opts.keystoresDir, secretsDir: opts.secretsDir, passwordFile: opts.passwordFile});
  const imported = importedKeystoresDir(dataDir);
  if (existsSync(imported)) sources.push({dir: imported, secretsDir: importedSecretsDir(dataDir)});
  const started = performance.now();
  for (const source of sources) {
    const result = await loadKeystoreDir(source.dir, source, known);
    keystores.push(...result.keys);
    failures.push(...result.failures);
  }
  if (sources.length > 0) log.info({keystores: keystores.length, failed: failures.length, ms: Math.round(performance.now() - started)}, "Keystores decrypted");
  if (failures.length > 0) {
    if (!opts.allowPartialKeys) {
      for (const key of keystores) key.lock.release();
      throw new KeyLoadError(failures);
    }
    for (const f of failures) log.warn({file: f.file, reason: f.reason}, "Keystore skipped (--allow-partial-keys)");
  }
  return {interop, keystores};
}
