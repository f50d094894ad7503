import {fromHex} from "@lodestar/utils";
import {createApiClient, httpTransport} from "../api/client.ts";
import {createValidatorBeaconApi} from "../api/validatorApi.ts";
import type {ValidatorOptions} from "../cli/options.ts";
import type {KeyFields, KeymanagerFields} from "../cli/validatorKeyOptions.ts";
import {getLogger, initLogging} from "../log.ts";
import {startValidatorClient, type ValidatorClient, type ValidatorClientOptions} from "./index.ts";

/** The key sources and keymanager API of the command-line options, for `validator` and the node's own validators alike. */
export function keyAndKeymanagerOptions(opts: KeyFields & KeymanagerFields): Pick<ValidatorClientOptions, "keystores" | "keymanager" | "doppelgangerProtection" | "remoteSigner"> {
  return {
    doppelgangerProtection: opts.doppelgangerProtection,
    remoteSigner: {url: opts.remoteSigner, timeoutMs: opts.remoteSignerTimeout},
    keystores: {
      keystoresDir: opts.keystoresDir,
      secretsDir: opts.secretsDir,
      passwordFile: opts.keystorePasswordFile,
      allowPartialKeys: opts.allowPartialKeys,
    },
    keymanager: opts.keymanager
      ? {port: opts.keymanagerPort, address: opts.keymanagerAddress, tokenFile: opts.keymanagerTokenFile, allowOrigin: opts.keymanagerAllowOrigin}
      : undefined,
  };
}

/** `beacon-gateway validator`: the validator client in its own process, over the node's REST API. */
export async function startStandaloneValidator(opts: ValidatorOptions): Promise<ValidatorClient> {
  initLogging({directive: opts.logLevel, format: opts.logFormat});
  getLogger("validator").info({beaconNode: opts.beaconNode, interop: opts.interopIndices.length, keystores: opts.keystoresDir ?? null, remoteSigner: opts.remoteSigner ?? null}, "starting validator client");
  const client = createApiClient(httpTransport(opts.beaconNode));
  return startValidatorClient({
    api: createValidatorBeaconApi(client),
    // any beacon node: one built before the newest routes too
    fallbackClient: client,
    indices: opts.interopIndices,
    ...keyAndKeymanagerOptions(opts),
    dataDir: opts.dataDir,
    graffiti: opts.graffiti,
    feeRecipient: opts.suggestedFeeRecipient !== undefined ? fromHex(opts.suggestedFeeRecipient) : undefined,
    builder: opts.builder ? {gasLimit: opts.gasLimit} : undefined,
  });
}
