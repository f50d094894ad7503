import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import {DOMAIN_BEACON_PROPOSER, DOMAIN_RANDAO} from "@lodestar/params";
import {computeEpochAtSlot, computeSigningRoot, interopSecretKey} from "@lodestar/state-transition";
import {ssz, type Root, type fulu} from "@lodestar/types";
import {toRootHex} from "@lodestar/utils";
import {mkdtempSync, rmSync} from "node:fs";
import {tmpdir} from "node:os";
import {join} from "node:path";
import type {BeaconChain} from "../../../src/chain/beaconChain.ts";
import {initChain} from "../../../src/chain/init.ts";
import type {PayloadAttributesEvent} from "../../../src/chain/interface.ts";
import {Clock} from "../../../src/clock/clock.ts";
import {devChainConfig} from "../../../src/config/chainConfig.ts";
import {BeaconDb} from "../../../src/db/beaconDb.ts";
import type {PayloadAttributes} from "../../../src/execution/engine.ts";
import {MockExecutionEngine} from "../../../src/execution/mockEngine.ts";

/** What the chain adds for the event stream and liveness: block_gossip, payload_attributes, the liveness record. */

const SECONDS_PER_SLOT = 2;
const FEE_RECIPIENT = new Uint8Array(20).fill(0xfe);

describe("chain events for the API", () => {
  const dir = mkdtempSync(join(tmpdir(), "bg-chain-events-"));
  const chainConfig = devChainConfig({secondsPerSlot: SECONDS_PER_SLOT, genesisFork: "fulu", forkEpochs: {}});
  const engine = new MockExecutionEngine();
  const built: PayloadAttributes[] = [];
  let db: BeaconDb;
  let chain: BeaconChain;

  beforeAll(async () => {
    const buildPayload = engine.buildPayload.bind(engine);
    engine.buildPayload = (fork, parent, attributes) => {
      built.push(attributes);
      return buildPayload(fork, parent, attributes);
    };
    db = await BeaconDb.open(join(dir, "beacon"), chainConfig);
    const genesisTime = Math.floor(Date.now() / 1000) - 3 * SECONDS_PER_SLOT;
    chain = await initChain(
      chainConfig,
      db,
      engine,
      (t) => new Clock(t, SECONDS_PER_SLOT, 8),
      {validatorCount: 64, genesisTime},
      {graffiti: () => new Uint8Array(32), feeRecipientOf: () => FEE_RECIPIENT}
    );
    chain.clock.start();
  }, 60_000);

  afterAll(async () => {
    chain.clock.stop();
    await chain.close();
    await db.close();
    rmSync(dir, {recursive: true, force: true});
  });

  async function produceAndSign(slot: number) {
    const proposer = (await chain.getHeadStateAtEpoch(computeEpochAtSlot(slot))).epochCtx.getBeaconProposer(slot);
    const key = interopSecretKey(proposer);
    const randaoReveal = key.sign(computeSigningRoot(ssz.Epoch, computeEpochAtSlot(slot), chain.config.getDomain(slot, DOMAIN_RANDAO))).toBytes();
    const {block} = await chain.produceBlock({slot, randaoReveal});
    const signingRoot = computeSigningRoot(ssz.fulu.BeaconBlock, block as never, chain.config.getDomain(slot, DOMAIN_BEACON_PROPOSER));
    return {message: block, signature: key.sign(signingRoot).toBytes()};
  }

  it("emits block_gossip before block, and records the proposer as live in the block's epoch", async () => {
    const seen: [string, number, string][] = [];
    const record = (name: string) => (e: {slot: number; block: Root}) => seen.push([name, e.slot, toRootHex(e.block)]);
    chain.emitter.on("block_gossip", record("block_gossip"));
    chain.emitter.on("block", record("block"));
    const slot = chain.currentSlot();
    const signed = await produceAndSign(slot);
    const {blockRoot} = await chain.importBlock(signed as never);
    expect(seen).toEqual([
      ["block_gossip", slot, toRootHex(blockRoot)],
      ["block", slot, toRootHex(blockRoot)],
    ]);
    expect(chain.liveness.isLive(computeEpochAtSlot(slot), signed.message.proposerIndex)).toBe(true);
    expect(chain.liveness.isLive(computeEpochAtSlot(slot), (signed.message.proposerIndex + 1) % 64)).toBe(false);
    chain.emitter.removeAllListeners("block_gossip");
    chain.emitter.removeAllListeners("block");
  });

  it("emits payload_attributes at each slot, for the next slot: what the engine is given when that block is produced", async () => {
    const event = await new Promise<PayloadAttributesEvent>((resolve) => chain.emitter.once("payload_attributes", resolve));
    const head = chain.getHead();
    expect(event.proposalSlot).toBe(chain.currentSlot() + 1);
    expect(event.fork).toBe("fulu");
    expect(toRootHex(event.parentBlockRoot)).toBe(toRootHex(head.blockRoot));
    expect(toRootHex(event.parentBlockHash)).toBe(toRootHex(head.executionBlockHash));
    expect(event.payloadAttributes.suggestedFeeRecipient).toEqual(FEE_RECIPIENT);
    const {message} = await produceAndSign(event.proposalSlot);
    expect(message.proposerIndex).toBe(event.proposerIndex);
    expect(built.at(-1)).toEqual(event.payloadAttributes);
    expect((message as fulu.BeaconBlock).body.executionPayload.blockNumber).toBe(event.parentBlockNumber + 1);
  }, 10_000);
});
