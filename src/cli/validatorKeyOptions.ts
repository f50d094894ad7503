import {statSync} from "node:fs";
import {InvalidValue, type OptionTable, flag, option} from "./optionTable.ts";
import {httpUrl, integer, port, readableFile, serverAddress} from "./values.ts";

/**
 * Where the validators' keys come from, and the keymanager API: the same options for
 * `validator` and for the node's in-process validators (each described once, src/cli/optionTable.ts).
 */

export interface KeyFields {
  keystoresDir: string | undefined;
  secretsDir: string | undefined;
  keystorePasswordFile: string | undefined;
  allowPartialKeys: boolean;
  doppelgangerProtection: boolean;
  remoteSigner: string | undefined;
  remoteSignerTimeout: number;
}

export interface KeymanagerFields {
  keymanager: boolean;
  keymanagerPort: number;
  keymanagerAddress: string;
  keymanagerTokenFile: string | undefined;
  keymanagerAllowOrigin: string | undefined;
}

export function directory(text: string): string {
  try {
    if (!statSync(text).isDirectory()) throw new Error("not a directory");
  } catch (e) {
    throw new InvalidValue(`"${text}" is not a directory (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  return text;
}

export function keyOptions(group?: string): OptionTable<KeyFields> {
  return {
    keystoresDir: option({
      name: "keystores",
      value: "DIR",
      group,
      help: "EIP-2335 keystores to validate with: `DIR/*.json`, or `DIR/<0xpubkey>/voting-keystore.json` as Lighthouse and Lodestar keep them; with `--secrets` or `--keystore-password-file`",
      parse: (text, ctx) => {
        if (text === undefined) return undefined;
        if (ctx.given("secretsDir") === ctx.given("keystorePasswordFile")) throw new InvalidValue("give its passwords with one of --secrets DIR or --keystore-password-file FILE");
        return directory(text);
      },
    }),
    secretsDir: option({
      name: "secrets",
      value: "DIR",
      group,
      help: "one password file per keystore, named by its public key (`0x…`, as Lighthouse, Lodestar and Nimbus name them), or by the keystore's file name with `.txt` (Teku)",
      parse: (text, ctx) => {
        if (text === undefined) return undefined;
        if (!ctx.given("keystoresDir")) throw new InvalidValue("only with --keystores");
        return directory(text);
      },
    }),
    keystorePasswordFile: option({
      name: "keystore-password-file",
      value: "FILE",
      group,
      help: "one password for every keystore of `--keystores`",
      parse: (text, ctx) => {
        if (text === undefined) return undefined;
        if (!ctx.given("keystoresDir")) throw new InvalidValue("only with --keystores");
        return readableFile(text);
      },
    }),
    allowPartialKeys: flag({
      name: "allow-partial-keys",
      group,
      help: "start with the keystores that can be used when others cannot (wrong password, corrupt file, in use by another client); without it the client refuses to start, naming each",
    }),
    remoteSigner: option({
      name: "remote-signer",
      value: "URL",
      group,
      help: "a remote signer with the Web3Signer ETH2 API, e.g. `http://127.0.0.1:9000`: its keys (`GET /api/v1/eth2/publicKeys`, asked again each epoch) validate, each signature asked of it after slashing protection recorded the message, and checked (see docs/validators.md)",
      parse: (text) => (text === undefined ? undefined : httpUrl(text)),
    }),
    remoteSignerTimeout: option({
      name: "remote-signer-timeout",
      value: "MS",
      default: "5000",
      group,
      help: "how long a remote signer may take to answer (every remote key's, those imported through the keymanager API too); the duty is skipped after it",
      parse: (text) => integer(text, 100, 60_000),
    }),
    doppelgangerProtection: flag({
      name: "doppelganger-protection",
      group,
      help: "a key (at start, or imported) signs only after two full epochs in which the beacon node's liveness endpoint saw it idle; a key found live stops the validators, naming its index",
    }),
  };
}

export function keymanagerOptions(group?: string): OptionTable<KeymanagerFields> {
  return {
    keymanager: flag({name: "keymanager", group, help: "serve the keymanager API (list, import and delete keys; fee recipient, gas limit and graffiti per key; voluntary exits)"}),
    keymanagerPort: option({name: "keymanager-port", value: "PORT", default: "5062", group, help: "keymanager API port (0: any free port, logged at start)", parse: port}),
    keymanagerAddress: option({
      name: "keymanager-address",
      value: "ADDR",
      default: "127.0.0.1",
      group,
      help: "keymanager API listen address; keep it local (or behind a tunnel): it imports and deletes keys",
      parse: serverAddress,
    }),
    keymanagerTokenFile: option({
      name: "keymanager-token-file",
      value: "FILE",
      defaultText: "`<data dir>/api-token.txt`, created (mode 0600) at the first start",
      group,
      help: "the bearer token every keymanager request must carry (`Authorization: Bearer <token>`)",
      parse: (text) => (text === undefined ? undefined : readableFile(text)),
    }),
    keymanagerAllowOrigin: option({
      name: "keymanager-allow-origin",
      value: "ORIGIN",
      group,
      help: "value of `Access-Control-Allow-Origin` on keymanager answers (no CORS headers without it)",
      parse: (text) => text,
    }),
  };
}
