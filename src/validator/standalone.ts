import {fromHex} from "@lodestar/utils";
import {createApiClient, httpTransport} from "../api/client.ts";
import {createValidatorClientMetrics} from "../metrics/validatorMetrics.ts";
import {startMetricsServer} from "../metrics/server.ts";
import type {ValidatorOptions} from "../cli/options.ts";
import type {KeyFields, KeymanagerFields} from "../cli/validatorKeyOptions.ts";
import {getLogger, initLogging} from "../log.ts";
import {currentAttemptSignal} from "./beaconNodes.ts";
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

/** How logs and metrics name a beacon node: its URL without credentials, query or trailing slash. */
export function beaconNodeName(text: string): string {
  const url = new URL(text);
  return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, "")}`;
}

/** `beacon-gateway validator`: the validator client in its own process, over one or more beacon nodes' REST API. */
export async function startStandaloneValidator(opts: ValidatorOptions): Promise<ValidatorClient> {
  initLogging({directive: opts.logLevel, format: opts.logFormat});
  const names = opts.beaconNodes.map(beaconNodeName);
  getLogger("validator").info({beaconNodes: names, interop: opts.interopIndices.length, keystores: opts.keystoresDir ?? null, remoteSigner: opts.remoteSigner ?? null}, "starting validator client");
  const metrics = opts.metrics ? createValidatorClientMetrics(names) : undefined;
  // each node over HTTP, its requests aborted when the attempt they belong to times out
  const endpoints = opts.beaconNodes.map((url, i) => ({name: names[i], client: createApiClient(httpTransport(url, {signal: currentAttemptSignal}))}));
  const client = await startValidatorClient({
    beaconNodes: {endpoints, metrics: metrics?.beaconNodes},
    indices: opts.interopIndices,
    ...keyAndKeymanagerOptions(opts),
    dataDir: opts.dataDir,
    graffiti: opts.graffiti,
    feeRecipient: opts.suggestedFeeRecipient !== undefined ? fromHex(opts.suggestedFeeRecipient) : undefined,
    builder: opts.builder ? {gasLimit: opts.gasLimit} : undefined,
    duties: metrics?.duties,
  });
  if (!metrics) return client;
  const server = await startMetricsServer(metrics.registry, {port: opts.metricsPort, address: opts.metricsAddress}).catch(async (err: unknown) => {
    await client.stop();
    throw err;
  });
  return {
    ...client,
    async stop() {
      await client.stop();
      await server.close();
    },
  };
}
