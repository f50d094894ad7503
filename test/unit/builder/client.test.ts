import {afterAll, beforeAll, beforeEach, describe, expect, it} from "@jest/globals";
import {readFileSync} from "node:fs";
import {type IncomingMessage, type Server, type ServerResponse, createServer} from "node:http";
import type {AddressInfo} from "node:net";
import {ForkName} from "@lodestar/params";
import {ssz} from "@lodestar/types";
import {BuilderClient, BuilderError} from "../../../src/builder/client.ts";
import {SignedValidatorRegistrations} from "../../../src/builder/types.ts";

/** A relay stand-in: records each request and answers with what the test set. */
interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: Buffer;
}
type Answer = (req: Seen, res: ServerResponse) => void;

let server: Server;
let url: string;
let seen: Seen[];
let answer: Answer;

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const s = {method: req.method ?? "", url: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks)};
      seen.push(s);
      answer(s, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  seen = [];
  answer = (_req, res) => res.writeHead(200).end();
});

const parentHash = new Uint8Array(32).fill(0xab);
const pubkey = new Uint8Array(48).fill(0xcd);

function denebBid() {
  const bid = ssz.deneb.SignedBuilderBid.defaultValue();
  bid.message.value = 123456789n;
  bid.message.header.parentHash = parentHash;
  bid.message.blobKzgCommitments = [new Uint8Array(48).fill(7)];
  return bid;
}

describe("BuilderClient", () => {
  it("registers validators with the builder-specs example body, as JSON", async () => {
    const example = JSON.parse(readFileSync("/work/shared/specs/builder-specs/examples/bellatrix/signed_validator_registrations.json", "utf8")).value;
    await new BuilderClient({url}).registerValidators(SignedValidatorRegistrations.fromJson(example));
    expect(seen).toHaveLength(1);
    expect(seen[0].method).toBe("POST");
    expect(seen[0].url).toBe("/eth/v1/builder/validators");
    expect(seen[0].headers["content-type"]).toBe("application/json");
    expect(JSON.parse(seen[0].body.toString()).map(lower)).toEqual(example.map(lower));
  });

  it("asks for a header at the spec's path, preferring SSZ, with its timeout; 204 is no bid", async () => {
    answer = (_req, res) => res.writeHead(204).end();
    const client = new BuilderClient({url, headerTimeoutMs: 950, nowMs: () => 1_700_000_000_123});
    expect(await client.getHeader(17, parentHash, pubkey)).toBeNull();
    expect(seen[0].url).toBe(`/eth/v1/builder/header/17/0x${"ab".repeat(32)}/0x${"cd".repeat(48)}`);
    expect(seen[0].headers.accept).toBe("application/octet-stream;q=1.0,application/json;q=0.9");
    expect(seen[0].headers["x-timeout-ms"]).toBe("950");
    expect(seen[0].headers["date-milliseconds"]).toBe("1700000000123");
  });

  it("reads a JSON bid ({version, data}) and then sends blinded blocks as JSON", async () => {
    const bid = denebBid();
    answer = (_req, res) => res.writeHead(200, {"Content-Type": "application/json"}).end(JSON.stringify({version: "deneb", data: ssz.deneb.SignedBuilderBid.toJson(bid)}));
    const client = new BuilderClient({url});
    const got = await client.getHeader(1, parentHash, pubkey);
    expect(got?.version).toBe("deneb");
    expect(ssz.deneb.SignedBuilderBid.equals(got!.bid as typeof bid, bid)).toBe(true);

    const payload = ssz.deneb.ExecutionPayloadAndBlobsBundle.defaultValue();
    answer = (_req, res) => res.writeHead(200, {"Content-Type": "application/json"}).end(JSON.stringify({version: "deneb", data: ssz.deneb.ExecutionPayloadAndBlobsBundle.toJson(payload)}));
    const block = ssz.deneb.SignedBlindedBeaconBlock.defaultValue();
    const revealed = await client.submitBlindedBlock(ForkName.deneb, block);
    expect(ssz.deneb.ExecutionPayloadAndBlobsBundle.equals(revealed as typeof payload, payload)).toBe(true);
    expect(seen[1].url).toBe("/eth/v1/builder/blinded_blocks");
    expect(seen[1].headers["content-type"]).toBe("application/json");
    expect(seen[1].headers["eth-consensus-version"]).toBe("deneb");
    expect(ssz.deneb.SignedBlindedBeaconBlock.fromJson(JSON.parse(seen[1].body.toString()))).toEqual(block);
  });

  it("reads an SSZ bid by its Eth-Consensus-Version, and then sends blinded blocks as SSZ (the spec's note on submitBlindedBlock)", async () => {
    const bid = denebBid();
    answer = (_req, res) => res.writeHead(200, {"Content-Type": "application/octet-stream", "Eth-Consensus-Version": "deneb"}).end(ssz.deneb.SignedBuilderBid.serialize(bid));
    const client = new BuilderClient({url});
    const got = await client.getHeader(1, parentHash, pubkey);
    expect(got?.version).toBe("deneb");
    expect(got!.bid.message.value).toBe(123456789n);

    answer = (_req, res) => res.writeHead(202).end();
    const block = ssz.electra.SignedBlindedBeaconBlock.defaultValue();
    await client.submitBlindedBlockV2(ForkName.fulu, block);
    expect(seen[1].url).toBe("/eth/v2/builder/blinded_blocks");
    expect(seen[1].headers["content-type"]).toBe("application/octet-stream");
    expect(seen[1].headers["eth-consensus-version"]).toBe("fulu");
    expect(Buffer.from(ssz.electra.SignedBlindedBeaconBlock.serialize(block)).equals(seen[1].body)).toBe(true);
  });

  it("a relay error carries the relay's message; v2 answered 200 is an error (202 expected)", async () => {
    answer = (_req, res) => res.writeHead(400, {"Content-Type": "application/json"}).end(JSON.stringify({code: 400, message: "Invalid block: missing signature"}));
    const client = new BuilderClient({url});
    const err = await client.submitBlindedBlock(ForkName.capella, ssz.capella.SignedBlindedBeaconBlock.defaultValue()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BuilderError);
    expect((err as BuilderError).status).toBe(400);
    expect((err as Error).message).toContain("Invalid block: missing signature");
    answer = (_req, res) => res.writeHead(200).end();
    await expect(client.submitBlindedBlockV2(ForkName.fulu, ssz.electra.SignedBlindedBeaconBlock.defaultValue())).rejects.toThrow("202 expected");
  });

  it("a payload of another fork than the block's is refused", async () => {
    answer = (_req, res) => res.writeHead(200, {"Content-Type": "application/json"}).end(JSON.stringify({version: "bellatrix", data: ssz.bellatrix.ExecutionPayload.toJson(ssz.bellatrix.ExecutionPayload.defaultValue())}));
    await expect(new BuilderClient({url}).submitBlindedBlock(ForkName.capella, ssz.capella.SignedBlindedBeaconBlock.defaultValue())).rejects.toThrow("bellatrix payload for a capella block");
  });

  it("a header that does not come within the timeout is a timed-out error", async () => {
    answer = (_req, res) => setTimeout(() => res.writeHead(204).end(), 1000);
    const err = (await new BuilderClient({url, headerTimeoutMs: 100}).getHeader(1, parentHash, pubkey).catch((e: unknown) => e)) as BuilderError;
    expect(err).toBeInstanceOf(BuilderError);
    expect(err.timedOut).toBe(true);
  });

  it("status resolves on 200 and rejects on 500 and on a refused connection", async () => {
    const client = new BuilderClient({url});
    await client.status();
    expect(seen[0].url).toBe("/eth/v1/builder/status");
    answer = (_req, res) => res.writeHead(500).end(JSON.stringify({code: 500, message: "builder down"}));
    await expect(client.status()).rejects.toThrow("builder down");
    await expect(new BuilderClient({url: "http://127.0.0.1:1"}).status()).rejects.toBeInstanceOf(BuilderError);
  });
});

function lower(json: unknown): unknown {
  return JSON.parse(JSON.stringify(json).toLowerCase());
}
