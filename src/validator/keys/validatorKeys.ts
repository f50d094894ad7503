import {mkdir, readdir, rm, rmdir} from "node:fs/promises";
import {dirname, join} from "node:path";
import {fromHex} from "@lodestar/utils";
import type {TopicLogger} from "../../log.ts";
import {InterchangeError, interchangeJson, parseInterchange} from "../interchange.ts";
import type {ValidatorSigner} from "../signer.ts";
import type {SlashingProtection} from "../slashingProtection.ts";
import type {ValidatorIndices} from "../validators.ts";
import {KeystoreError, keystorePubkey, parseKeystore} from "./keystore.ts";
import {KEYSTORE_FILE, type LoadedKey, unlockKeystore} from "./keystoreDir.ts";
import {KeystoreLock} from "./lockFile.ts";
import type {ProposerSettings} from "./proposerSettings.ts";
import type {RemoteSignerClient} from "../remote/client.ts";
import {type RemoteKeyDefinition, remoteSignerUrl, saveRemoteKeys} from "./remoteKeys.ts";
import {writeWhole} from "./writeWhole.ts";

/**
 * The keys a running validator client signs with, and their changes through the keymanager
 * API. A key is an interop key (`--interop-indices`, read-only) or a keystore's (loaded at
 * start, or imported: written to `<data dir>/keystores/<0xpubkey>/voting-keystore.json` with
 * its password in `<data dir>/secrets/<0xpubkey>`, and loaded from there at every start), or a
 * remote signer's (`--remote-signer`, read-only, or imported: kept in
 * `<data dir>/remote-keys.json`, remoteKeys.ts). Imports and deletions run one at a time, and
 * take effect at once: the duties look the keys up when they run.
 */

export type ImportStatus = {status: "imported" | "duplicate" | "error"; message?: string};
export type DeleteStatus = {status: "deleted" | "not_active" | "not_found" | "error"; message?: string};

/** A client error: the request as a whole is refused (400) and nothing changes. */
export class KeyRequestError extends Error {}

interface ManagedKey {
  pubkey: string;
  /** undefined for an interop key and a remote one */
  keystore?: LoadedKey;
  /** a remote signer's key: its URL, and whether it came from the command line (not deletable) */
  remote?: {url: string; readonly: boolean};
}

export interface ValidatorKeysOptions {
  signer: ValidatorSigner;
  validators: ValidatorIndices;
  protection: SlashingProtection;
  settings: ProposerSettings;
  /** where imported keystores (`keystores/`) and their passwords (`secrets/`) go */
  dataDir: string;
  log: TopicLogger;
  /** with doppelganger protection: every key added is held until seen idle */
  doppelganger?: {register(pubkey: string): void; forget(pubkey: string): void};
  /** the client of the remote signer at this URL (one per URL); none: remote keys are refused */
  remoteSigner?(url: string): RemoteSignerClient;
}

export function importedKeystoresDir(dataDir: string): string {
  return join(dataDir, "keystores");
}

export function importedSecretsDir(dataDir: string): string {
  return join(dataDir, "secrets");
}

export class ValidatorKeys {
  private readonly opts: ValidatorKeysOptions;
  private readonly keys = new Map<string, ManagedKey>();
  private queue: Promise<unknown> = Promise.resolve();

  constructor(opts: ValidatorKeysOptions) {
    this.opts = opts;
  }

  /** Signs with an interop key or a loaded keystore's key from now on. */
  add(key: {pubkey: string; keystore?: LoadedKey}, secretKey = key.keystore?.secretKey): void {
    if (!secretKey) throw new Error("a key without its secret");
    this.keys.set(key.pubkey, key);
    this.opts.doppelganger?.register(key.pubkey);
    this.opts.validators.add(this.opts.signer.addKey(secretKey));
  }

  /** Signs with a remote signer's key from now on. */
  addRemote(pubkey: string, url: string, readonly: boolean): void {
    if (!this.opts.remoteSigner) throw new Error("this client takes no remote keys");
    const client = this.opts.remoteSigner(url);
    this.keys.set(pubkey, {pubkey, remote: {url, readonly}});
    this.opts.doppelganger?.register(pubkey);
    const bytes = fromHex(pubkey);
    this.opts.signer.addRemoteKey(bytes, client);
    this.opts.validators.add(bytes);
  }

  has(pubkey: string): boolean {
    return this.keys.has(pubkey);
  }

  get size(): number {
    return this.keys.size;
  }

  /** The local keys (interop and keystores), as listKeys answers them. */
  list(): {validating_pubkey: string; derivation_path?: string; readonly: boolean}[] {
    return this.local().map((k) => ({
      validating_pubkey: k.pubkey,
      ...(k.keystore?.derivationPath ? {derivation_path: k.keystore.derivationPath} : {}),
      readonly: k.keystore === undefined,
    }));
  }

  /** The remote keys, as listRemoteKeys answers them. */
  listRemote(): {pubkey: string; url: string; readonly: boolean}[] {
    return [...this.keys.values()].flatMap((k) => (k.remote ? [{pubkey: k.pubkey, url: k.remote.url, readonly: k.remote.readonly}] : []));
  }

  /** Releases every keystore lock (at stop). */
  releaseLocks(): void {
    for (const k of this.keys.values()) k.keystore?.lock.release();
  }

  /**
   * importKeystores: the interchange's histories of the keys being imported are merged into
   * slashing protection first (a bad or foreign interchange refuses the whole request), then
   * each keystore is decrypted (one at a time: the KDF leaves the thread pool to the rest of
   * the client), stored and signed with.
   */
  importKeystores(keystores: string[], passwords: string[], slashingProtection: string | undefined): Promise<ImportStatus[]> {
    return this.serialized(async () => {
      if (keystores.length !== passwords.length) throw new KeyRequestError(`${keystores.length} keystores but ${passwords.length} passwords`);
      const parsed = keystores.map((text) => {
        try {
          return parseKeystore(JSON.parse(text));
        } catch (e) {
          return e instanceof KeystoreError || e instanceof SyntaxError ? new Error(`not an EIP-2335 keystore: ${e.message}`) : (e as Error);
        }
      });
      if (slashingProtection !== undefined) {
        const incoming = new Set(parsed.map((k) => (k instanceof Error ? undefined : keystorePubkey(k))).filter((pk) => pk !== undefined && !this.keys.has(pk)));
        await this.importProtection(slashingProtection, incoming);
      }
      const out: ImportStatus[] = [];
      for (let i = 0; i < parsed.length; i++) {
        const keystore = parsed[i];
        if (keystore instanceof Error) {
          out.push({status: "error", message: keystore.message});
          continue;
        }
        const named = keystorePubkey(keystore);
        if (named !== undefined && this.keys.has(named)) {
          out.push({status: "duplicate"});
          continue;
        }
        try {
          const {secretKey, pubkey} = await unlockKeystore(keystore, passwords[i]);
          if (this.keys.has(pubkey)) {
            out.push({status: "duplicate"});
            continue;
          }
          const loaded = await this.store(pubkey, keystores[i], passwords[i], keystore.path);
          this.add({pubkey, keystore: {...loaded, secretKey}});
          this.opts.log.info({pubkey}, "Imported a keystore through the keymanager API");
          out.push({status: "imported"});
        } catch (e) {
          out.push({status: "error", message: (e as Error).message});
        }
      }
      return out;
    });
  }

  /**
   * deleteKeys: the keys stop signing first (a check in flight is waited for), then their files
   * go, and their slashing protection history (kept in the database) is returned as an EIP-3076
   * interchange, for the deleted keys and those with a history but no key here (not_active).
   */
  deleteKeys(pubkeys: string[]): Promise<{statuses: DeleteStatus[]; slashingProtection: string}> {
    return this.serialized(async () => {
      const {signer, validators, protection, settings, log} = this.opts;
      const statuses: DeleteStatus[] = [];
      const removed: ManagedKey[] = [];
      for (const pubkey of pubkeys) {
        const key = this.keys.get(pubkey);
        if (key?.remote) {
          statuses.push({status: "error", message: "a remote signer's key: delete it with DELETE /eth/v1/remotekeys"});
          continue;
        }
        if (key && !key.keystore) {
          statuses.push({status: "error", message: "an interop key (--interop-indices): it cannot be deleted; restart the client without it"});
          continue;
        }
        if (key) {
          signer.removeKey(pubkey);
          validators.remove(pubkey);
          this.opts.doppelganger?.forget(pubkey);
          this.keys.delete(pubkey);
          removed.push(key);
        }
        statuses.push({status: "not_found"});
      }
      // every check begun before the removal is on disk before the history is read
      await Promise.all(removed.map((k) => protection.idle(k.pubkey)));
      for (const key of removed) {
        const i = pubkeys.indexOf(key.pubkey);
        try {
          await this.removeFiles(key.keystore!);
          await settings.forget(key.pubkey);
          statuses[i] = {status: "deleted"};
          log.info({pubkey: key.pubkey}, "Deleted a key through the keymanager API");
        } catch (e) {
          statuses[i] = {status: "error", message: `the key signs no more, but its files could not be removed (it would be loaded again at the next start): ${(e as Error).message}`};
        }
      }
      const wanted = pubkeys.filter((pk, i) => statuses[i].status === "deleted" || statuses[i].status === "not_found");
      const histories = await protection.historyOf([...new Set(wanted)]);
      const withHistory = new Set(histories.map((h) => h.pubkey));
      pubkeys.forEach((pk, i) => {
        if (statuses[i].status === "not_found" && withHistory.has(pk)) statuses[i] = {status: "not_active"};
      });
      const root = await protection.genesisValidatorsRoot();
      if (root === null) throw new Error("the slashing protection records are bound to no chain");
      return {statuses, slashingProtection: JSON.stringify(interchangeJson(root, histories, "complete"))};
    });
  }

  /**
   * importRemoteKeys: each new key is written to `remote-keys.json` (with those imported before),
   * then signed with through its remote signer from the next duty on.
   */
  importRemoteKeys(definitions: RemoteKeyDefinition[]): Promise<ImportStatus[]> {
    return this.serialized(async () => {
      const statuses: ImportStatus[] = [];
      const added: RemoteKeyDefinition[] = [];
      for (const {pubkey, url} of definitions) {
        if (this.keys.has(pubkey) || added.some((d) => d.pubkey === pubkey)) {
          statuses.push({status: "duplicate"});
          continue;
        }
        try {
          added.push({pubkey, url: remoteSignerUrl(url)});
          statuses.push({status: "imported"});
        } catch (e) {
          statuses.push({status: "error", message: `url: ${(e as Error).message}`});
        }
      }
      if (added.length === 0) return statuses;
      try {
        await saveRemoteKeys(this.opts.dataDir, [...this.importedRemote(), ...added]);
      } catch (e) {
        const message = `the remote keys could not be stored: ${(e as Error).message}`;
        return statuses.map((s) => (s.status === "imported" ? {status: "error", message} : s));
      }
      for (const {pubkey, url} of added) {
        this.addRemote(pubkey, url, false);
        this.opts.log.info({pubkey, url}, "Imported a remote key through the keymanager API");
      }
      return statuses;
    });
  }

  /** deleteRemoteKeys: the keys stop signing (a check in flight is waited for), then go from `remote-keys.json`. */
  deleteRemoteKeys(pubkeys: string[]): Promise<DeleteStatus[]> {
    return this.serialized(async () => {
      const {signer, validators, protection, log} = this.opts;
      const statuses: DeleteStatus[] = [];
      const removed: ManagedKey[] = [];
      for (const pubkey of pubkeys) {
        const key = this.keys.get(pubkey);
        if (!key?.remote) statuses.push({status: "not_found"});
        else if (key.remote.readonly) statuses.push({status: "error", message: "a key of --remote-signer: restart the client without it"});
        else {
          signer.removeKey(pubkey);
          validators.remove(pubkey);
          this.opts.doppelganger?.forget(pubkey);
          this.keys.delete(pubkey);
          removed.push(key);
          statuses.push({status: "deleted"});
        }
      }
      if (removed.length === 0) return statuses;
      await Promise.all(removed.map((k) => protection.idle(k.pubkey)));
      try {
        await saveRemoteKeys(this.opts.dataDir, this.importedRemote());
      } catch (e) {
        const message = `the key signs no more, but remote-keys.json could not be written (it would be used again at the next start): ${(e as Error).message}`;
        return statuses.map((s) => (s.status === "deleted" ? {status: "error", message} : s));
      }
      for (const key of removed) log.info({pubkey: key.pubkey, url: key.remote!.url}, "Deleted a remote key through the keymanager API");
      return statuses;
    });
  }

  private local(): ManagedKey[] {
    return [...this.keys.values()].filter((k) => !k.remote);
  }

  /** The remote keys imported through the API (those remote-keys.json keeps). */
  private importedRemote(): RemoteKeyDefinition[] {
    return [...this.keys.values()].flatMap((k) => (k.remote && !k.remote.readonly ? [{pubkey: k.pubkey, url: k.remote.url}] : []));
  }

  private async importProtection(text: string, pubkeys: Set<string | undefined>): Promise<void> {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (e) {
      throw new KeyRequestError(`slashing_protection is not JSON: ${(e as Error).message}`);
    }
    try {
      const interchange = parseInterchange(json);
      // only the keys not signing here: the checks of a key in use must not run beside a merge of its records
      const data = interchange.data.filter((h) => pubkeys.has(h.pubkey));
      await this.opts.protection.importHistory(interchange.genesisValidatorsRoot, data);
    } catch (e) {
      if (e instanceof InterchangeError) throw new KeyRequestError(`slashing_protection: ${e.message}`);
      throw e;
    }
  }

  /** Writes an imported keystore and its password under the data dir, locked. */
  private async store(pubkey: string, keystoreText: string, password: string, derivationPath: string): Promise<Omit<LoadedKey, "secretKey">> {
    const dir = join(importedKeystoresDir(this.opts.dataDir), pubkey);
    const keystorePath = join(dir, KEYSTORE_FILE);
    const passwordPath = join(importedSecretsDir(this.opts.dataDir), pubkey);
    await mkdir(dir, {recursive: true});
    await mkdir(dirname(passwordPath), {recursive: true, mode: 0o700});
    await writeWhole(passwordPath, password);
    await writeWhole(keystorePath, keystoreText);
    return {pubkey, keystorePath, passwordPath, derivationPath, lock: KeystoreLock.acquire(keystorePath)};
  }

  private async removeFiles(key: LoadedKey): Promise<void> {
    key.lock.release();
    await rm(key.keystorePath, {force: true});
    if (key.passwordPath !== undefined) await rm(key.passwordPath, {force: true});
    // the key's own directory (`<0xpubkey>/`), once empty
    const dir = dirname(key.keystorePath);
    if (dir.endsWith(key.pubkey) && (await readdir(dir)).length === 0) await rmdir(dir);
  }

  private serialized<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task);
    this.queue = run.catch(() => undefined);
    return run;
  }
}
