import {Level} from "level";
import {Bucket} from "./buckets.ts";
import {bucketKey} from "./keys.ts";

/**
 * The chain fingerprint stored in the LevelDB at `dir` (chainFingerprint.ts), read without
 * loading lodestar, so that a command can fix the consensus preset from it first. Null when
 * absent; throws what LevelDB throws when the database cannot be opened.
 */
export async function readStoredFingerprint(dir: string): Promise<string | null> {
  const db = new Level<Uint8Array, Uint8Array>(dir, {keyEncoding: "view", valueEncoding: "view", createIfMissing: false});
  await db.open();
  try {
    const bytes = await db.get(bucketKey(Bucket.chainMeta, new TextEncoder().encode("chainFingerprint")));
    return bytes === undefined ? null : new TextDecoder().decode(bytes);
  } finally {
    await db.close();
  }
}

/** The preset a fingerprint records, or null if it is unreadable. */
export function presetOfFingerprint(fingerprint: string): string | null {
  try {
    const preset = (JSON.parse(fingerprint) as {preset?: unknown}).preset;
    return typeof preset === "string" ? preset : null;
  } catch {
    return null;
  }
}
