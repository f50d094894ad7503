import {readFileSync} from "node:fs";
import {rename, writeFile} from "node:fs/promises";
import {graffitiFromText} from "../../graffiti.ts";

/**
 * Per-key fee recipient, gas limit and graffiti, set through the keymanager API and kept in
 * `<data dir>/proposer-settings.json` (written whole: a new file renamed over the old one).
 * A key without its own value gets the process-wide default. The duties read them when they
 * run: a change applies from the next duty on.
 */

interface KeySettings {
  /** 0x hex, lowercase */
  feeRecipient?: string;
  /** decimal */
  gasLimit?: string;
  graffiti?: string;
}

export interface ProposerDefaults {
  /** 0x hex, lowercase; none: the beacon node's own applies */
  feeRecipient?: string;
  /** decimal */
  gasLimit: string;
  /** none: the beacon node's own applies */
  graffiti?: string;
}

/** The gas limit a builder registration asks for when none is set (the execution clients' default target). */
export const DEFAULT_GAS_LIMIT = "60000000";

export class ProposerSettings {
  private readonly file: string;
  private readonly byKey: Map<string, KeySettings>;
  readonly defaults: ProposerDefaults;
  private writing: Promise<void> = Promise.resolve();
  /** bumped at every change: the duty loop announces fee recipients again when it moved */
  version = 0;

  private constructor(file: string, byKey: Map<string, KeySettings>, defaults: ProposerDefaults) {
    this.file = file;
    this.byKey = byKey;
    this.defaults = defaults;
  }

  /** Reads the file (none yet: no per-key settings); throws if it is not this store's JSON. */
  static open(file: string, defaults: ProposerDefaults): ProposerSettings {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return new ProposerSettings(file, new Map(), defaults);
      throw e;
    }
    const json = JSON.parse(text) as Record<string, KeySettings>;
    if (typeof json !== "object" || json === null || Array.isArray(json)) throw new Error(`${file} is not a JSON object of per-key settings`);
    return new ProposerSettings(file, new Map(Object.entries(json)), defaults);
  }

  feeRecipientOf(pubkey: string): string | undefined {
    return this.byKey.get(pubkey)?.feeRecipient ?? this.defaults.feeRecipient;
  }

  gasLimitOf(pubkey: string): string {
    return this.byKey.get(pubkey)?.gasLimit ?? this.defaults.gasLimit;
  }

  /** The graffiti text of a key's blocks; undefined: the beacon node's own. */
  graffitiOf(pubkey: string): string | undefined {
    return this.byKey.get(pubkey)?.graffiti ?? this.defaults.graffiti;
  }

  /** The graffiti bytes of a key's blocks. */
  graffitiBytesOf(pubkey: string): Uint8Array | undefined {
    const text = this.graffitiOf(pubkey);
    return text === undefined ? undefined : graffitiFromText(text);
  }

  set(pubkey: string, field: keyof KeySettings, value: string): Promise<void> {
    this.byKey.set(pubkey, {...this.byKey.get(pubkey), [field]: value});
    return this.changed();
  }

  /** Removes a key's own value of `field` (the default applies again). */
  unset(pubkey: string, field: keyof KeySettings): Promise<void> {
    const settings = this.byKey.get(pubkey);
    if (settings?.[field] === undefined) return Promise.resolve();
    delete settings[field];
    if (Object.keys(settings).length === 0) this.byKey.delete(pubkey);
    return this.changed();
  }

  /** Forgets every setting of a key (deleted from the client). */
  forget(pubkey: string): Promise<void> {
    if (!this.byKey.delete(pubkey)) return Promise.resolve();
    return this.changed();
  }

  private changed(): Promise<void> {
    this.version++;
    const text = JSON.stringify(Object.fromEntries(this.byKey), null, 2) + "\n";
    // one write at a time, each of the whole map as it is when it starts
    this.writing = this.writing.catch(() => undefined).then(async () => {
      const partial = `${this.file}.partial`;
      await writeFile(partial, text, {mode: 0o600});
      await rename(partial, this.file);
    });
    return this.writing;
  }
}
