import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import {type IncomingMessage, type Server, type ServerResponse, createServer} from "node:http";
import type {AddressInfo} from "node:net";
import {mkdtemp, rm} from "node:fs/promises";
import {tmpdir} from "node:os";
import {join} from "node:path";
import type {SecretKey} from "@chainsafe/blst";
import {BitArray, type Type} from "@chainsafe/ssz";
import {createBeaconConfig, type BeaconConfig} from "@lodestar/config";
import {
  DOMAIN_AGGREGATE_AND_PROOF,
  DOMAIN_APPLICATION_BUILDER,
  DOMAIN_BEACON_ATTESTER,
  DOMAIN_BEACON_PROPOSER,
  DOMAIN_CONTRIBUTION_AND_PROOF,
  DOMAIN_RANDAO,
  DOMAIN_SELECTION_PROOF,
  DOMAIN_SYNC_COMMITTEE,
  DOMAIN_SYNC_COMMITTEE_SELECTION_PROOF,
  DOMAIN_VOLUNTARY_EXIT,
  type ForkName,
} from "@lodestar/params";
import {computeDomain, computeEpochAtSlot, computeSigningRoot, interopSecretKey} from "@lodestar/state-transition";
import {ssz, sszTypesFor, type DomainType} from "@lodestar/types";
import {fromHex, toHex} from "@lodestar/utils";
import {devChainConfig} from "../../../src/config/chainConfig.ts";
import type {ListeningServer} from "../../../src/httpListen.ts";
import {RemoteSignerClient, RemoteSignerError} from "../../../src/validator/remote/client.ts";
import {startStandInSigner} from "../../../src/validator/remote/standInSigner.ts";
import {ValidatorSigner} from "../../../src/validator/signer.ts";
import {SlashingProtection, SlashingProtectionError} from "../../../src/validator/slashingProtection.ts";
import {validateSigningRequest} from "../../conformance/web3signerOpenapi.ts";

// every fork on one chain (minimal preset: 8 slots per epoch), phase0 at genesis, fulu at epoch 6
const chainConfig = devChainConfig({secondsPerSlot: 6, genesisFork: "phase0", forkEpochs: {altair: 1, bellatrix: 2, capella: 3, deneb: 4, electra: 5, fulu: 6}});
const genesisValidatorsRoot = new Uint8Array(32).fill(7);
type Body = Record<string, any>;

/**
 * Remote signing against the stand-in signer, through a recording proxy that can also answer
 * as a broken signer would. Each request body is checked against Web3Signer's OpenAPI schema
 * (vendor/web3signer), and its signing root computed again from the body alone, as Web3Signer
 * does (the message from its JSON, the domain from its fork_info): it must be the root sent.
 */
describe("remote signing (Web3Signer API)", () => {
  let dir: string;
  let config: BeaconConfig;
  let local: ValidatorSigner;
  let remote: ValidatorSigner;
  let standIn: ListeningServer;
  let proxy: Server;
  let proxyUrl: string;
  /** how the proxy answers: as the stand-in, or broken in one way (`hang-sign`: it answers all but signing) */
  let mode: "forward" | "other-key" | "not-a-signature" | "refuse" | "hang" | "hang-sign" = "forward";
  const bodies: Body[] = [];
  const protections: SlashingProtection[] = [];
  const key = interopSecretKey(5);
  const pubkey = key.toPublicKey().toBytes();
  const other = interopSecretKey(6);

  async function relay(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString();
    const signing = req.url?.startsWith("/api/v1/eth2/sign/") ?? false;
    if (signing) bodies.push(JSON.parse(text) as Body);
    if (mode === "hang" || (mode === "hang-sign" && signing)) return;
    if (mode === "refuse") return void res.writeHead(412).end("slashing protection of the signer");
    if (mode === "not-a-signature") return void res.writeHead(200, {"Content-Type": "application/json"}).end(JSON.stringify({signature: "0x1234"}));
    if (mode === "other-key") {
      const signature = toHex(other.sign(fromHex(bodies.at(-1)!.signingRoot)).toBytes());
      return void res.writeHead(200, {"Content-Type": "application/json"}).end(JSON.stringify({signature}));
    }
    const answer = await fetch(`http://127.0.0.1:${standIn.port}${req.url}`, {method: req.method, headers: {Accept: req.headers.accept ?? "*/*", "Content-Type": "application/json"}, body: req.method === "POST" ? text : undefined});
    res.writeHead(answer.status, {"Content-Type": answer.headers.get("content-type") ?? "text/plain"}).end(await answer.text());
  }

  async function openProtection(name: string): Promise<SlashingProtection> {
    const protection = await SlashingProtection.open(join(dir, name));
    protections.push(protection);
    return protection;
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "remote-signer-"));
    config = createBeaconConfig(chainConfig, genesisValidatorsRoot);
    local = new ValidatorSigner(config, [key], await openProtection("local"));
    standIn = await startStandInSigner(new Map<string, SecretKey>([[toHex(pubkey), key]]), {port: 0, address: "127.0.0.1"});
    proxy = createServer((req, res) => void relay(req, res).catch((e: unknown) => res.writeHead(500).end(String(e))));
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    remote = new ValidatorSigner(config, [], await openProtection("remote"));
    remote.addRemoteKey(pubkey, new RemoteSignerClient(proxyUrl, 500));
  });

  afterAll(async () => {
    proxy.closeAllConnections();
    await new Promise((resolve) => proxy.close(resolve));
    await standIn.close();
    for (const p of protections) await p.close();
    await rm(dir, {recursive: true, force: true});
  });

  /** The signing root Web3Signer computes from a request: the message decoded from the body, the domain from its fork_info. */
  function web3signerRoot(body: Body): Uint8Array {
    const domainOf = (domainType: DomainType, epoch: number): Uint8Array => {
      const {fork, genesis_validators_root} = body.fork_info;
      const version = epoch < Number(fork.epoch) ? fork.previous_version : fork.current_version;
      return computeDomain(domainType, fromHex(version), fromHex(genesis_validators_root));
    };
    const root = <T>(type: Type<T>, json: unknown, domainType: DomainType, epoch: (value: T) => number): Uint8Array => {
      const value = type.fromJson(json);
      return computeSigningRoot(type, value, domainOf(domainType, epoch(value)));
    };
    const forkOf = (version: string): ForkName => version.toLowerCase() as ForkName;
    switch (body.type) {
      case "RANDAO_REVEAL":
        return root(ssz.Epoch, body.randao_reveal.epoch, DOMAIN_RANDAO, (e) => e);
      case "BLOCK_V2": {
        const {version, block, block_header} = body.beacon_block;
        if (block_header) return root(ssz.phase0.BeaconBlockHeader, block_header, DOMAIN_BEACON_PROPOSER, (h) => computeEpochAtSlot(h.slot));
        return root(sszTypesFor(forkOf(version)).BeaconBlock as Type<{slot: number}>, block, DOMAIN_BEACON_PROPOSER, (b) => computeEpochAtSlot(b.slot));
      }
      case "ATTESTATION":
        return root(ssz.phase0.AttestationData, body.attestation, DOMAIN_BEACON_ATTESTER, (d) => d.target.epoch);
      case "AGGREGATION_SLOT":
        return root(ssz.Slot, body.aggregation_slot.slot, DOMAIN_SELECTION_PROOF, computeEpochAtSlot);
      case "AGGREGATE_AND_PROOF":
        return root(ssz.phase0.AggregateAndProof, body.aggregate_and_proof, DOMAIN_AGGREGATE_AND_PROOF, (a) => computeEpochAtSlot(a.aggregate.data.slot));
      case "AGGREGATE_AND_PROOF_V2": {
        const {version, data} = body.aggregate_and_proof;
        const type = sszTypesFor(forkOf(version)).AggregateAndProof as Type<{aggregate: {data: {slot: number}}}>;
        return root(type, data, DOMAIN_AGGREGATE_AND_PROOF, (a) => computeEpochAtSlot(a.aggregate.data.slot));
      }
      case "SYNC_COMMITTEE_MESSAGE": {
        const {beacon_block_root, slot} = body.sync_committee_message;
        return computeSigningRoot(ssz.Root, fromHex(beacon_block_root), domainOf(DOMAIN_SYNC_COMMITTEE, computeEpochAtSlot(Number(slot))));
      }
      case "SYNC_COMMITTEE_SELECTION_PROOF":
        return root(ssz.altair.SyncAggregatorSelectionData, body.sync_aggregator_selection_data, DOMAIN_SYNC_COMMITTEE_SELECTION_PROOF, (d) => computeEpochAtSlot(d.slot));
      case "SYNC_COMMITTEE_CONTRIBUTION_AND_PROOF":
        return root(ssz.altair.ContributionAndProof, body.contribution_and_proof, DOMAIN_CONTRIBUTION_AND_PROOF, (c) => computeEpochAtSlot(c.contribution.slot));
      case "VOLUNTARY_EXIT":
        return root(ssz.phase0.VoluntaryExit, body.voluntary_exit, DOMAIN_VOLUNTARY_EXIT, (e) => e.epoch);
      case "VALIDATOR_REGISTRATION": {
        // the builder domain: genesis fork version, zero validators root (builder-specs)
        const domain = computeDomain(DOMAIN_APPLICATION_BUILDER, config.GENESIS_FORK_VERSION, new Uint8Array(32));
        return computeSigningRoot(ssz.bellatrix.ValidatorRegistrationV1, ssz.bellatrix.ValidatorRegistrationV1.fromJson(body.validator_registration), domain);
      }
    }
    throw new Error(`no signing root for type ${body.type}`);
  }

  const attestationData = (targetEpoch: number, headByte: number) => ({
    slot: targetEpoch * 8 + 1,
    index: 0,
    beaconBlockRoot: new Uint8Array(32).fill(headByte),
    source: {epoch: targetEpoch - 1, root: new Uint8Array(32)},
    target: {epoch: targetEpoch, root: new Uint8Array(32).fill(3)},
  });

  it("every kind of message on every fork: the body conforms to the API's schema, its own signing root is ours, and the remote signature is the local key's", async () => {
    const root = new Uint8Array(32).fill(5);
    const phase0Aggregate = {...ssz.phase0.Attestation.defaultValue(), aggregationBits: BitArray.fromSingleBit(4, 1)};
    phase0Aggregate.data = {...phase0Aggregate.data, slot: 3};
    const electraAggregate = {...ssz.electra.Attestation.defaultValue(), aggregationBits: BitArray.fromSingleBit(4, 1), committeeBits: BitArray.fromSingleBit(4, 0)};
    electraAggregate.data = {...electraAggregate.data, slot: 41};
    const contribution = {...ssz.altair.SyncCommitteeContribution.defaultValue(), slot: 10, subcommitteeIndex: 2, beaconBlockRoot: root};
    const signs: [string, (s: ValidatorSigner) => Promise<Uint8Array>][] = [
      ["randao phase0", (s) => s.signRandaoReveal(pubkey, 0)],
      ["randao fulu", (s) => s.signRandaoReveal(pubkey, 6)],
      ["block phase0", async (s) => (await s.signBlock(pubkey, {...ssz.phase0.BeaconBlock.defaultValue(), slot: 1, proposerIndex: 5})).signature],
      ["block altair", async (s) => (await s.signBlock(pubkey, {...ssz.altair.BeaconBlock.defaultValue(), slot: 9, proposerIndex: 5})).signature],
      ["block bellatrix", async (s) => (await s.signBlock(pubkey, {...ssz.bellatrix.BeaconBlock.defaultValue(), slot: 17, proposerIndex: 5})).signature],
      ["blinded block deneb", async (s) => (await s.signBlock(pubkey, {...ssz.deneb.BlindedBeaconBlock.defaultValue(), slot: 33, proposerIndex: 5} as never)).signature],
      ["block fulu", async (s) => (await s.signBlock(pubkey, {...ssz.fulu.BeaconBlock.defaultValue(), slot: 49, proposerIndex: 5})).signature],
      ["attestation electra", (s) => s.signAttestationData(pubkey, attestationData(5, 2))],
      ["selection proof", (s) => s.signSelectionProof(pubkey, 3)],
      ["aggregate phase0", async (s) => (await s.signAggregateAndProof(pubkey, {aggregatorIndex: 5, aggregate: phase0Aggregate, selectionProof: new Uint8Array(96)})).signature],
      ["aggregate electra", async (s) => (await s.signAggregateAndProof(pubkey, {aggregatorIndex: 5, aggregate: electraAggregate, selectionProof: new Uint8Array(96)})).signature],
      ["sync message", (s) => s.signSyncCommitteeMessage(pubkey, 10, root)],
      ["sync selection proof", (s) => s.signSyncSelectionProof(pubkey, 10, 2)],
      ["contribution", async (s) => (await s.signContributionAndProof(pubkey, {aggregatorIndex: 5, contribution, selectionProof: new Uint8Array(96)})).signature],
      ["exit bellatrix", async (s) => (await s.signVoluntaryExit(pubkey, {epoch: 2, validatorIndex: 5})).signature],
      ["exit electra (capella's domain)", async (s) => (await s.signVoluntaryExit(pubkey, {epoch: 5, validatorIndex: 5})).signature],
      [
        "builder registration",
        async (s) => (await s.signValidatorRegistration({feeRecipient: new Uint8Array(20).fill(1), gasLimit: 30_000_000, timestamp: 1_700_000_000, pubkey})).signature,
      ],
    ];
    bodies.length = 0;
    for (const [what, sign] of signs) {
      const localSignature = await sign(local);
      expect([what, toHex(await sign(remote))]).toEqual([what, toHex(localSignature)]);
    }
    expect(bodies).toHaveLength(signs.length);
    for (const [i, body] of bodies.entries()) {
      expect([signs[i][0], validateSigningRequest(body)]).toEqual([signs[i][0], []]);
      expect([signs[i][0], toHex(web3signerRoot(body))]).toEqual([signs[i][0], body.signingRoot]);
    }
    expect(new Set(bodies.map((b) => b.type))).toEqual(
      new Set([
        "RANDAO_REVEAL",
        "BLOCK_V2",
        "ATTESTATION",
        "AGGREGATION_SLOT",
        "AGGREGATE_AND_PROOF",
        "AGGREGATE_AND_PROOF_V2",
        "SYNC_COMMITTEE_MESSAGE",
        "SYNC_COMMITTEE_SELECTION_PROOF",
        "SYNC_COMMITTEE_CONTRIBUTION_AND_PROOF",
        "VOLUNTARY_EXIT",
        "VALIDATOR_REGISTRATION",
      ])
    );
    // phase0 and altair blocks travel whole, later ones as their header; electra aggregates as V2 with their version
    expect(bodies.filter((b) => b.type === "BLOCK_V2").map((b) => [b.beacon_block.version, "block_header" in b.beacon_block])).toEqual([
      ["PHASE0", false],
      ["ALTAIR", false],
      ["BELLATRIX", true],
      ["DENEB", true],
      ["FULU", true],
    ]);
    expect(bodies.find((b) => b.type === "AGGREGATE_AND_PROOF_V2")?.aggregate_and_proof.version).toBe("ELECTRA");
    expect(bodies.find((b) => b.type === "VALIDATOR_REGISTRATION")).not.toHaveProperty("fork_info");
  });

  it("the schema check itself refuses a misspelt field and a missing one", () => {
    const body = {type: "RANDAO_REVEAL", fork_info: {fork: {previous_version: "0x00000001", current_version: "0x00000001", epoch: "1"}, genesis_validators_root: toHex(genesisValidatorsRoot)}, signingRoot: toHex(new Uint8Array(32))};
    expect(validateSigningRequest({...body, randao_reveal: {epoch: "1"}})).toEqual([]);
    expect(validateSigningRequest({...body, randao_reveal: {epoch: "1"}, signing_root: "0x00"}).join()).toMatch(/signing_root is not a field/);
    expect(validateSigningRequest(body).join()).toMatch(/randao_reveal/);
  });

  it("slashing protection decides before the signer is asked: a slashable attestation never reaches it", async () => {
    await remote.signAttestationData(pubkey, attestationData(7, 1));
    const asked = bodies.length;
    await expect(remote.signAttestationData(pubkey, attestationData(7, 2))).rejects.toBeInstanceOf(SlashingProtectionError);
    expect(bodies.length).toBe(asked);
  });

  it("a signer that answers another key's signature, no signature, or a refusal: the signing fails naming it, nothing is returned", async () => {
    try {
      mode = "other-key";
      await expect(remote.signSyncCommitteeMessage(pubkey, 12, new Uint8Array(32))).rejects.toThrow(/returned a SYNC_COMMITTEE_MESSAGE signature that does not verify against 0x[0-9a-f]{96} and the signing root: discarded/);
      mode = "not-a-signature";
      await expect(remote.signRandaoReveal(pubkey, 1)).rejects.toThrow(/answer to a RANDAO_REVEAL request is no signature/);
      mode = "refuse";
      await expect(remote.signSelectionProof(pubkey, 12)).rejects.toThrow(new RegExp(`remote signer ${proxyUrl} answered 412: slashing protection of the signer`));
    } finally {
      mode = "forward";
    }
  });

  it("a signer found down (no answer in time, connection refused): the duty fails naming it before slashing protection records anything", async () => {
    try {
      mode = "hang";
      await expect(remote.signRandaoReveal(pubkey, 2)).rejects.toThrow(new RegExp(`remote signer ${proxyUrl}: no answer within 500 ms`));
      // the signer failed to answer: before recording, its upcheck is asked, and times out
      const asked = bodies.length;
      const attestation = remote.signAttestationData(pubkey, attestationData(8, 1));
      await expect(attestation).rejects.toThrow(new RegExp(`remote signer ${proxyUrl}: no answer within 500 ms`));
      await expect(attestation).rejects.toBeInstanceOf(RemoteSignerError);
      expect(bodies.length).toBe(asked);
    } finally {
      mode = "forward";
    }
    // nothing was recorded for it: another attestation of the same target is signed
    expect(toHex(await remote.signAttestationData(pubkey, attestationData(8, 2)))).toBe(toHex(await local.signAttestationData(pubkey, attestationData(8, 2))));

    const down = new ValidatorSigner(config, [], await openProtection("down"));
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const downUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((resolve) => closed.close(resolve));
    down.addRemoteKey(pubkey, new RemoteSignerClient(downUrl, 500));
    await expect(down.signAttestationData(pubkey, attestationData(9, 1))).rejects.toThrow(new RegExp(`remote signer ${downUrl}: unreachable \\(.*ECONNREFUSED`));
  });

  it("a signer that fails after the record was made (it answered just before): the record stays, as slashing protection's rule wants", async () => {
    await remote.signRandaoReveal(pubkey, 3);
    try {
      mode = "hang-sign";
      await expect(remote.signAttestationData(pubkey, attestationData(10, 1))).rejects.toThrow(/no answer within 500 ms/);
    } finally {
      mode = "forward";
    }
    await expect(remote.signAttestationData(pubkey, attestationData(10, 2))).rejects.toBeInstanceOf(SlashingProtectionError);
    // the same attestation may be asked again
    expect(toHex(await remote.signAttestationData(pubkey, attestationData(10, 1)))).toBe(toHex(await local.signAttestationData(pubkey, attestationData(10, 1))));
  });

  it("the stand-in lists its keys and refuses requests that are not the API's", async () => {
    const client = new RemoteSignerClient(`http://127.0.0.1:${standIn.port}`);
    expect(await client.publicKeys()).toEqual([toHex(pubkey)]);
    const sign = (path: string, body: unknown) =>
      fetch(`http://127.0.0.1:${standIn.port}/api/v1/eth2/sign/${path}`, {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)});
    const good = {...bodies.find((b) => b.type === "RANDAO_REVEAL")};
    const answer = await sign(toHex(pubkey), good);
    // without Accept: application/json, the bare signature as text/plain (the API's other form)
    expect([answer.status, answer.headers.get("content-type"), (await answer.text()).length]).toEqual([200, "text/plain", 194]);
    expect((await sign(toHex(other.toPublicKey().toBytes()), good)).status).toBe(404);
    expect((await sign(toHex(pubkey), {...good, fork_info: undefined})).status).toBe(400);
    expect((await sign(toHex(pubkey), {...good, signingRoot: undefined})).status).toBe(400);
    expect((await sign(toHex(pubkey), {...good, type: "NOT_A_TYPE"})).status).toBe(400);
  });
});
