import {SecretKey} from "@chainsafe/blst";
import {isForkPostCapella} from "@lodestar/params";
import {fromHex} from "@lodestar/utils";
import {randomBytes} from "node:crypto";
import {createApiClient, httpTransport} from "./api/client.ts";
import type {BeaconEvent} from "./api/routes/events.ts";
import {createValidatorBeaconApi} from "./api/validatorApi.ts";
import type {MockBuilderOptions} from "./cli/builderOptions.ts";
import {HttpExecutionEngine} from "./execution/httpEngine.ts";
import {loadOrCreateJwtSecret} from "./execution/jwt.ts";
import {getLogger} from "./log.ts";
import {readNodeChain} from "./validator/nodeChain.ts";
import {MockBuilder} from "./builder/mockBuilder.ts";
import {type RunningMockBuilder, startMockBuilderServer} from "./builder/mockBuilderServer.ts";

const log = getLogger("builder");
const RECONNECT_MS = 1000;
/** how long the relay waits at start for its beacon node to answer */
const START_ATTEMPTS = 30;

/** The beacon node's chain config, asked again each second while the node is not up yet. */
async function readChainOf(client: ReturnType<typeof createApiClient>): Promise<Awaited<ReturnType<typeof readNodeChain>>> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await readNodeChain(createValidatorBeaconApi(client), log);
    } catch (e) {
      if (attempt >= START_ATTEMPTS) throw new Error(`cannot read the beacon node's chain: ${(e as Error).message}`);
      await new Promise((r) => setTimeout(r, RECONNECT_MS));
    }
  }
}

/**
 * `beacon-gateway mock-builder`: the relay of mockBuilder.ts over HTTP. Like a real builder it
 * follows a beacon node (`--beacon-node`): the chain's config, the `payload_attributes` events
 * that say what each proposal builds on, proposers' keys, and from fulu the publication of the
 * blocks it unblinds. Payloads come from the Engine API (`--engine`, JWT-authenticated).
 */
export async function startMockBuilderProcess(opts: MockBuilderOptions): Promise<RunningMockBuilder> {
  const client = createApiClient(httpTransport(opts.beaconNode));
  const {config} = await readChainOf(client);
  const engine = new HttpExecutionEngine({url: opts.engine, jwtSecret: loadOrCreateJwtSecret(opts.jwtSecret)});
  await engine.start();
  const secretKey = opts.secretKey ? SecretKey.fromBytes(fromHex(opts.secretKey)) : SecretKey.fromKeygen(randomBytes(32));
  const pubkeys = new Map<number, Uint8Array>();
  const builder = new MockBuilder({
    config,
    engine,
    secretKey,
    bidValue: opts.bidValue,
    lateBidMs: opts.lateBidMs,
    async proposerPubkey(index) {
      let pubkey = pubkeys.get(index);
      if (!pubkey) {
        const {data} = await client.request("getStateValidator", {stateId: "head", validatorId: index});
        pubkeys.set(index, (pubkey = data.validator.pubkey));
      }
      return pubkey;
    },
    async publishBlock(fork, signedBlock, blobsBundle) {
      const signedBlockContents = {signedBlock, kzgProofs: blobsBundle?.proofs ?? [], blobs: blobsBundle?.blobs ?? []};
      await client.request("publishBlockV2", {signedBlockContents, broadcastValidation: "gossip", fork});
    },
  });
  builder.fault = opts.fault;

  let stopped = false;
  void (async () => {
    while (!stopped) {
      try {
        const events = (await client.request("eventstream", {topics: ["payload_attributes"]})) as {data: AsyncIterable<BeaconEvent>};
        for await (const event of events.data) {
          if (stopped) break;
          if (event.topic !== "payload_attributes") continue;
          const {version, data} = event.data;
          const attrs = data.payloadAttributes as {timestamp: number; prevRandao: Uint8Array; withdrawals?: never};
          builder.onPayloadAttributes({
            slot: data.proposalSlot,
            proposerIndex: data.proposerIndex,
            parentHash: data.parentBlockHash,
            parentBlockNumber: data.parentBlockNumber,
            parentBlockRoot: data.parentBlockRoot,
            timestamp: attrs.timestamp,
            prevRandao: attrs.prevRandao,
            withdrawals: isForkPostCapella(version) ? attrs.withdrawals : undefined,
          });
        }
      } catch (e) {
        if (!stopped) log.warn({err: (e as Error).message}, "payload_attributes stream lost; reconnecting");
      }
      if (!stopped) await new Promise((r) => setTimeout(r, RECONNECT_MS));
    }
  })();

  const server = await startMockBuilderServer(builder, config, {port: opts.port, address: opts.address});
  return {
    port: server.port,
    async close() {
      stopped = true;
      engine.stop();
      await server.close();
    },
  };
}
