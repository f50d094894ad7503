import {mkdirSync, writeFileSync} from "node:fs";
import {join} from "node:path";
import {interopSecretKey} from "@lodestar/state-transition";
import {createKeystore, type KeystoreJson} from "../src/validator/keys/keystore.ts";

/** Keystores of interop keys, made with a cheap PBKDF2 (c = 2) so that tests decrypt them at once. */

export function interopPubkey(index: number): string {
  return "0x" + Buffer.from(interopSecretKey(index).toPublicKey().toBytes()).toString("hex");
}

export function interopKeystore(index: number, password: string): Promise<KeystoreJson> {
  const sk = interopSecretKey(index);
  return createKeystore(sk.toBytes(), password, sk.toPublicKey().toBytes(), {kdf: "pbkdf2", cost: 2, path: `m/12381/3600/${index}/0/0`});
}

/** Lighthouse's layout: `keys/<0xpubkey>/voting-keystore.json`, `secrets/<0xpubkey>`. Returns {keys, secrets}. */
export async function writeLighthouseLayout(root: string, indices: number[], password = (i: number) => `password ${i}`): Promise<{keys: string; secrets: string}> {
  const keys = join(root, "keys");
  const secrets = join(root, "secrets");
  mkdirSync(secrets, {recursive: true});
  for (const i of indices) {
    const dir = join(keys, interopPubkey(i));
    mkdirSync(dir, {recursive: true});
    writeFileSync(join(dir, "voting-keystore.json"), JSON.stringify(await interopKeystore(i, password(i))));
    writeFileSync(join(secrets, interopPubkey(i)), password(i) + "\n");
  }
  return {keys, secrets};
}
