import {afterAll, describe, expect, it} from "@jest/globals";
import {writeFileSync} from "node:fs";
import {join} from "node:path";
import {NodeProcess, getJson, restNodeArgs, tempDataDir, waitFor} from "./nodeProcess.ts";

/**
 * `--network custom --config config.yaml --genesis-state genesis.ssz`, the layout the public
 * testnets publish, on a network of the mainnet preset: the files come from a first node (its
 * `/eth/v1/config/spec` written out as config.yaml, its genesis state as SSZ); a second node
 * started from them alone runs the chain with its validators.
 */
describe("a custom network of the mainnet preset", () => {
  const data = tempDataDir("customnet");
  const configFile = join(data.dir, "config.yaml");
  const genesisFile = join(data.dir, "genesis.ssz");
  let node: NodeProcess | undefined;

  afterAll(async () => {
    await node?.stop();
    data.remove();
  });

  it(
    "starts from its config.yaml and genesis.ssz and produces blocks",
    async () => {
      const maker = new NodeProcess(restNodeArgs(join(data.dir, "maker"), ["--preset", "mainnet", "--seconds-per-slot", "1", "--dev-validators", "none"]));
      try {
        const makerUrl = await maker.restUrl();
        const spec = (await getJson(makerUrl, "/eth/v1/config/spec")).body.data as Record<string, unknown>;
        expect(spec.PRESET_BASE).toBe("mainnet");
        // YAML lines: every value as a quoted string (a flow list for the blob schedule), as the testnets' files hold them
        const yaml = Object.entries({...spec, CONFIG_NAME: "custom-mainnet-preset"})
          .map(([key, value]) => `${key}: ${JSON.stringify(value)}`)
          .join("\n");
        writeFileSync(configFile, yaml + "\n");
        const res = await fetch(`${makerUrl}/eth/v2/debug/beacon/states/genesis`, {headers: {accept: "application/octet-stream"}});
        expect(res.status).toBe(200);
        writeFileSync(genesisFile, Buffer.from(await res.arrayBuffer()));
      } finally {
        await maker.stop();
      }

      node = new NodeProcess(
        restNodeArgs(join(data.dir, "node"), ["--network", "custom", "--config", configFile, "--genesis-state", genesisFile, "--dev-validators", "0..63"])
      );
      const url = await node.restUrl();
      const spec = (await getJson(url, "/eth/v1/config/spec")).body.data;
      expect(spec).toMatchObject({PRESET_BASE: "mainnet", CONFIG_NAME: "custom-mainnet-preset", SLOTS_PER_EPOCH: "32", SECONDS_PER_SLOT: "1"});
      const first = await waitFor("a block", 30_000, async () => {
        const head = await getJson(url, "/eth/v1/beacon/headers/head");
        return head.status === 200 && Number(head.body.data.header.message.slot) > 0 ? Number(head.body.data.header.message.slot) : null;
      });
      await waitFor("two more blocks", 15_000, async () => {
        const head = await getJson(url, "/eth/v1/beacon/headers/head");
        return Number(head.body.data.header.message.slot) >= first + 2 ? true : null;
      });
    },
    120_000
  );
});
