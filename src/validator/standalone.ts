import {createApiClient, httpTransport} from "../api/client.ts";
import {createValidatorBeaconApi} from "../api/validatorApi.ts";
import type {ValidatorOptions} from "../cli/options.ts";
import {getLogger, initLogging} from "../log.ts";
import {startValidatorClient, type ValidatorClient} from "./index.ts";

/** `beacon-gateway validator`: the validator client in its own process, over the node's REST API. */
export async function startStandaloneValidator(opts: ValidatorOptions, graffiti: Uint8Array | undefined): Promise<ValidatorClient> {
  initLogging({directive: opts.logLevel, format: opts.logFormat});
  getLogger("validator").info({beaconNode: opts.beaconNode, validators: opts.interopIndices.length}, "starting validator client");
  const client = createApiClient(httpTransport(opts.beaconNode));
  return startValidatorClient({
    api: createValidatorBeaconApi(client),
    // any beacon node: one built before the newest routes too
    fallbackClient: client,
    indices: opts.interopIndices,
    dataDir: opts.dataDir,
    graffiti: graffiti ? () => graffiti : undefined,
    builder: opts.builder ? {gasLimit: opts.gasLimit} : undefined,
  });
}
