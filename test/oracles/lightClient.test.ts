import {afterAll, describe, expect, it} from "@jest/globals";
import {getClient} from "@lodestar/api";
import {chainConfigFromJson, createChainForkConfig} from "@lodestar/config";
import {Lightclient, LightclientEvent} from "@lodestar/light-client";
import {LightClientRestTransport} from "@lodestar/light-client/transport";
import {EPOCHS_PER_SYNC_COMMITTEE_PERIOD, SLOTS_PER_EPOCH} from "@lodestar/params";
import {NodeProcess, getJson, restNodeArgs, tempDataDir, waitFor} from "../e2e/nodeProcess.ts";
import {chainConfigFromJson as apiChainConfigFromJson, createChainForkConfig as apiChainForkConfig} from "../../node_modules/@lodestar/api/node_modules/@lodestar/config/lib/index.js";

/**
 * @lodestar/light-client 1.28.1 (the registry's newest; another team's light client, beside our
 * own spec transcription in test/e2e/lightClient.test.ts) bootstraps from our node's REST API and
 * follows it into the next sync-committee period with its own REST transport, verifying every
 * update (Merkle branches, sync-committee signatures with @chainsafe/bls, herumi: see
 * jest.config.js). In the suite: one fork (fulu), from late in period 0 into period 1 (about
 * 30 s). `npm run oracles` follows a chain whose forks come a period apart, altair to fulu,
 * across every period boundary (about 6 minutes).
 *
 * 1.28.1 knows fulu: it upgrades headers to it and its types are @lodestar/types 1.46's, the
 * node's own; its REST client is @lodestar/api 1.48.0, asked for JSON: in SSZ that client cannot
 * name a dev chain's fork digests (see lodestarCalls.ts).
 */

const FULL = process.env.ORACLES_FULL === "1";
const SLOTS_PER_PERIOD = EPOCHS_PER_SYNC_COMMITTEE_PERIOD * SLOTS_PER_EPOCH;
/** the suite's slice starts late in period 0; the full run starts early enough to see its bootstrap's period through */
const GENESIS_AGO_SECONDS = FULL ? 30 : SLOTS_PER_PERIOD - 16;
const FORKS = ["altair", "bellatrix", "capella", "deneb", "electra", "fulu"] as const;
/** the full run: a fork per sync-committee period */
const FORK_ARGS = FULL
  ? ["--genesis-fork", "altair", "--fork-epochs", FORKS.slice(1).map((f, i) => `${f}=${(i + 1) * EPOCHS_PER_SYNC_COMMITTEE_PERIOD}`).join(",")]
  : ["--genesis-fork", "fulu"];
const LAST_PERIOD = FULL ? FORKS.length - 1 : 1;
const RUN_MS = FULL ? (LAST_PERIOD + 1) * SLOTS_PER_PERIOD * 1000 + 60_000 : 75_000;

const periodOf = (slot: number) => Math.floor(slot / SLOTS_PER_PERIOD);

describe("@lodestar/light-client 1.28.1 following our node", () => {
  const data = tempDataDir("lodestar-lc");
  let node: NodeProcess | undefined;
  let client: Lightclient | undefined;
  let closeEvents = () => undefined as void;
  afterAll(async () => {
    client?.stop();
    closeEvents();
    await node?.stop("SIGKILL");
    data.remove();
  });

  it(
    FULL ? "from altair to fulu, a fork per period, every update verified" : "from a bootstrap into the next period (fulu), every update verified",
    async () => {
      const genesisTime = Math.floor(Date.now() / 1000) - GENESIS_AGO_SECONDS;
      node = new NodeProcess(restNodeArgs(data.dir, ["--seconds-per-slot", "1", "--genesis-time", String(genesisTime), ...FORK_ARGS]));
      const url = await node.restUrl();
      const spec = (await getJson<{data: Record<string, string>}>(url, "/eth/v1/config/spec")).body.data;
      const genesis = (await getJson(url, "/eth/v1/beacon/genesis")).body.data;
      const genesisRoot = (await getJson(url, "/eth/v1/beacon/blocks/genesis/root")).body.data.root as string;

      // the bootstrap is of genesis; the client then asks for the latest optimistic update: once the chain has blocks
      await waitFor("an optimistic update", 30_000, async () => ((await getJson(url, "/eth/v1/beacon/light_client/optimistic_update")).status === 200 ? true : null));

      const api = getClient({baseUrl: url, globalInit: {responseWireFormat: "json", retries: 0}}, {config: apiChainForkConfig(apiChainConfigFromJson(spec))});
      const errors: string[] = [];
      const verified = {updates: 0, optimistic: 0, finality: 0};
      const rest = new LightClientRestTransport(api);
      // the transport's event stream has its own controller, which the client's stop() leaves open
      closeEvents = () => (rest as unknown as {controller: AbortController}).controller.abort();
      const transport = verifying(rest, verified, errors);
      const logger = {
        error: (msg: string, _ctx?: unknown, e?: Error) => errors.push(`${msg}: ${e?.message ?? ""}`),
        warn: () => undefined,
        info: () => undefined,
        debug: () => undefined,
      };
      client = await Lightclient.initializeFromCheckpointRoot({
        config: createChainForkConfig(chainConfigFromJson(spec)),
        logger,
        genesisData: {genesisTime: Number(genesis.genesis_time), genesisValidatorsRoot: genesis.genesis_validators_root},
        transport,
        checkpointRoot: Buffer.from(genesisRoot.slice(2), "hex"),
      });
      const heads: number[] = [];
      client.emitter.on(LightclientEvent.lightClientOptimisticHeader, (header) => heads.push(header.beacon.slot));
      await client.start();

      const deadline = Date.now() + RUN_MS;
      const reached = () => periodOf(client!.getHead().beacon.slot) >= LAST_PERIOD && verified.optimistic >= 3;
      while (!reached() && errors.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 500));
      client.stop();
      closeEvents();

      expect(errors).toEqual([]);
      expect(periodOf(client.getHead().beacon.slot)).toBe(LAST_PERIOD);
      // the period's update (its next sync committee) came over REST, the head updates by events
      expect(verified.updates).toBeGreaterThan(0);
      expect(verified.optimistic).toBeGreaterThan(0);
      // it followed the head in every period it passed (and so on every fork of the full run)
      const periods = new Set(heads.map(periodOf));
      for (let p = periodOf(heads[0] ?? 0); p <= LAST_PERIOD; p++) expect(periods).toContain(p);
      // near the node's head
      const headSlot = Number((await getJson(url, "/eth/v1/beacon/headers/head")).body.data.header.message.slot);
      expect(headSlot - client.getHead().beacon.slot).toBeLessThanOrEqual(4);
      if (FULL) expect(periodOf(client.getFinalized().beacon.slot)).toBeGreaterThanOrEqual(LAST_PERIOD - 1);
    },
    RUN_MS + 60_000
  );
});

type Transport = LightClientRestTransport;

/**
 * The transport, with each update it hands the light client counted once the client has taken
 * it, and each refusal (a failed verification) recorded. The client ignores a throw in an event
 * handler; here it is an error.
 */
function verifying(inner: Transport, verified: {updates: number; optimistic: number; finality: number}, errors: string[]): Transport {
  const wrap =
    <T>(kind: "optimistic" | "finality", handler: (update: T) => void) =>
    (update: T) => {
      try {
        handler(update);
        verified[kind]++;
      } catch (e) {
        errors.push(`${kind} update refused: ${(e as Error).message}`);
      }
    };
  return Object.assign(Object.create(inner) as Transport, {
    getUpdates: async (startPeriod: number, count: number) => {
      const updates = await inner.getUpdates(startPeriod, count);
      // the client processes them right after; a refusal reaches its logger
      verified.updates += updates.length;
      return updates;
    },
    onOptimisticUpdate: (handler: Parameters<Transport["onOptimisticUpdate"]>[0]) => inner.onOptimisticUpdate(wrap("optimistic", handler)),
    onFinalityUpdate: (handler: Parameters<Transport["onFinalityUpdate"]>[0]) => inner.onFinalityUpdate(wrap("finality", handler)),
  });
}
