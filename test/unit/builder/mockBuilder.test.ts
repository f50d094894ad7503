import {describe, expect, it} from "@jest/globals";
import {createBeaconConfig} from "@lodestar/config";
import {DOMAIN_APPLICATION_BUILDER, DOMAIN_BEACON_PROPOSER, ForkName} from "@lodestar/params";
import {computeDomain, computeSigningRoot, executionPayloadToPayloadHeader, interopSecretKey} from "@lodestar/state-transition";
import {ssz, type deneb} from "@lodestar/types";
import {type BidExpectations, InvalidBidError, validateBid} from "../../../src/builder/bidValidation.ts";
import {BuilderRequestError, MOCK_BUILDER_EXTRA_DATA, MockBuilder} from "../../../src/builder/mockBuilder.ts";
import {GENESIS_EXECUTION_BLOCK_HASH, MockExecutionEngine} from "../../../src/execution/mockEngine.ts";
import {testConfig} from "../db/helpers.ts";

const config = createBeaconConfig(testConfig, new Uint8Array(32).fill(0x42));
const SLOT = 33; // deneb (epoch 4 of the minimal preset)
const proposerIndex = 3;
const proposerKey = interopSecretKey(proposerIndex);
const proposerPubkey = proposerKey.toPublicKey().toBytes();
const feeRecipient = new Uint8Array(20).fill(0x11);
const attrs = {
  slot: SLOT,
  proposerIndex,
  parentHash: GENESIS_EXECUTION_BLOCK_HASH,
  parentBlockNumber: 0,
  parentBlockRoot: new Uint8Array(32).fill(5),
  timestamp: 1_000_198,
  prevRandao: new Uint8Array(32).fill(6),
  withdrawals: [],
};

function makeBuilder() {
  const published: unknown[] = [];
  const builder = new MockBuilder({
    config,
    engine: new MockExecutionEngine(),
    secretKey: interopSecretKey(99),
    bidValue: 5000n,
    lateBidMs: 0,
    proposerPubkey: async (index) => interopSecretKey(index).toPublicKey().toBytes(),
    publishBlock: async (...args) => void published.push(args),
    nowSeconds: () => 1_000_000,
  });
  const message = {feeRecipient, gasLimit: 36_000_000, timestamp: 999_999, pubkey: proposerPubkey};
  const domain = computeDomain(DOMAIN_APPLICATION_BUILDER, config.GENESIS_FORK_VERSION, new Uint8Array(32));
  builder.registerValidators([{message, signature: proposerKey.sign(computeSigningRoot(ssz.bellatrix.ValidatorRegistrationV1, message, domain)).toBytes()}]);
  builder.onPayloadAttributes(attrs);
  return {builder, published};
}

const expectations: BidExpectations = {
  fork: ForkName.deneb,
  parentHash: attrs.parentHash,
  parentBlockNumber: 0,
  parentGasLimit: 30_000_000,
  timestamp: attrs.timestamp,
  prevRandao: attrs.prevRandao,
  withdrawalsRoot: ssz.capella.Withdrawals.hashTreeRoot([]),
  feeRecipient,
  registeredGasLimit: 36_000_000,
  maxBlobsPerBlock: 6,
};

function blindedBlockOf(header: deneb.ExecutionPayloadHeader, key = proposerKey): deneb.SignedBlindedBeaconBlock {
  const block = ssz.deneb.BlindedBeaconBlock.defaultValue();
  block.slot = SLOT;
  block.proposerIndex = proposerIndex;
  block.body.executionPayloadHeader = header;
  const signingRoot = computeSigningRoot(ssz.deneb.BlindedBeaconBlock, block, config.getDomain(SLOT, DOMAIN_BEACON_PROPOSER));
  return {message: block, signature: key.sign(signingRoot).toBytes()};
}

describe("mock builder", () => {
  it("bids a payload marked with its extra_data that passes every bid check, and reveals it for the proposer's signed blinded block", async () => {
    const {builder} = makeBuilder();
    const got = await builder.getHeader(SLOT, attrs.parentHash, proposerPubkey);
    expect(got?.version).toBe("deneb");
    const bid = got!.bid as deneb.SignedBuilderBid;
    expect(Buffer.from(bid.message.header.extraData).toString()).toBe(MOCK_BUILDER_EXTRA_DATA);
    expect(bid.message.value).toBe(5000n);
    validateBid(config, got!.version, bid, expectations);

    // a block signed by another key is refused; the proposer's gets the payload of that header
    await expect(builder.submitBlindedBlock(blindedBlockOf(bid.message.header, interopSecretKey(4)), false)).rejects.toThrow("invalid proposer signature");
    const revealed = await builder.submitBlindedBlock(blindedBlockOf(bid.message.header), false);
    const {executionPayload} = revealed!.payload as deneb.ExecutionPayloadAndBlobsBundle;
    expect(ssz.deneb.ExecutionPayloadHeader.equals(executionPayloadToPayloadHeader(4, executionPayload) as deneb.ExecutionPayloadHeader, bid.message.header)).toBe(true);
  });

  it("refuses a header for a key that is not registered, and has no bid for a parent it has no attributes of", async () => {
    const {builder} = makeBuilder();
    await expect(builder.getHeader(SLOT, attrs.parentHash, interopSecretKey(4).toPublicKey().toBytes())).rejects.toBeInstanceOf(BuilderRequestError);
    expect(await builder.getHeader(SLOT, new Uint8Array(32).fill(9), proposerPubkey)).toBeNull();
  });

  it("faults: no bid, a bad signature, a wrong parent, other values, a withheld payload", async () => {
    const {builder} = makeBuilder();
    const rule = async (): Promise<string | null> => {
      const got = await builder.getHeader(SLOT, attrs.parentHash, proposerPubkey);
      try {
        validateBid(config, got!.version, got!.bid, expectations);
        return null;
      } catch (e) {
        return (e as InvalidBidError).rule;
      }
    };
    builder.fault = "no-bid";
    expect(await builder.getHeader(SLOT, attrs.parentHash, proposerPubkey)).toBeNull();
    builder.fault = "bad-signature";
    expect(await rule()).toBe("signature");
    builder.fault = "wrong-parent";
    expect(await rule()).toBe("parent_hash");
    builder.fault = "higher-value";
    expect((await builder.getHeader(SLOT, attrs.parentHash, proposerPubkey))!.bid.message.value).toBe(500_000n);
    builder.fault = "lower-value";
    expect((await builder.getHeader(SLOT, attrs.parentHash, proposerPubkey))!.bid.message.value).toBe(1n);
    builder.fault = "withhold";
    const header = (await builder.getHeader(SLOT, attrs.parentHash, proposerPubkey))!.bid.message.header as deneb.ExecutionPayloadHeader;
    const err = (await builder.submitBlindedBlock(blindedBlockOf(header), false).catch((e: unknown) => e)) as BuilderRequestError;
    expect(err.status).toBe(500);
    expect(err.message).toContain("withheld");
  });
});
