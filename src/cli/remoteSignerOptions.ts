import type {LogDirective} from "../log.ts";
import {logOptions} from "./commonOptions.ts";
import {type CommandSpec, InvalidValue, option} from "./optionTable.ts";
import {port, readableFile, serverAddress} from "./values.ts";
import {directory} from "./validatorKeyOptions.ts";

/** The `remote-signer` command's options (src/cli/optionTable.ts). */

export interface RemoteSignerOptions {
  keystoresDir: string;
  secretsDir: string | undefined;
  keystorePasswordFile: string | undefined;
  port: number;
  address: string;
  logLevel: LogDirective;
  logFormat: "text" | "json";
}

export const REMOTE_SIGNER_COMMAND: CommandSpec<RemoteSignerOptions> = {
  usage: "beacon-gateway remote-signer --keystores DIR --secrets DIR [options]",
  about: `A stand-in remote signer for tests, not a product: it holds the keys of EIP-2335 keystores and
answers the Web3Signer ETH2 API (GET /api/v1/eth2/publicKeys, POST /api/v1/eth2/sign/{pubkey},
GET /upcheck), signing the signingRoot each request carries. It keeps no slashing protection of
its own and asks no authentication: validators use it with --remote-signer URL (docs/validators.md).`,
  options: {
    keystoresDir: option({
      name: "keystores",
      value: "DIR",
      required: true,
      help: "EIP-2335 keystores: `DIR/*.json`, or `DIR/<0xpubkey>/voting-keystore.json`; with `--secrets` or `--keystore-password-file`",
      parse: (text, ctx) => {
        if (ctx.given("secretsDir") === ctx.given("keystorePasswordFile")) throw new InvalidValue("give its passwords with one of --secrets DIR or --keystore-password-file FILE");
        return directory(text);
      },
    }),
    secretsDir: option({
      name: "secrets",
      value: "DIR",
      help: "one password file per keystore, named by its public key (`0x…`), or by the keystore's file name with `.txt`",
      parse: (text) => (text === undefined ? undefined : directory(text)),
    }),
    keystorePasswordFile: option({
      name: "keystore-password-file",
      value: "FILE",
      help: "one password for every keystore",
      parse: (text) => (text === undefined ? undefined : readableFile(text)),
    }),
    port: option({name: "port", value: "PORT", default: "9000", help: "signing API port (Web3Signer's default; 0: any free port, logged at start)", parse: port}),
    address: option({name: "address", value: "ADDR", default: "127.0.0.1", help: "listen address; keep it local: it signs whatever it is asked", parse: serverAddress}),
    ...logOptions(),
  },
};
