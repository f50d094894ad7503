import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import {Tree} from "@chainsafe/persistent-merkle-tree";
import {DOMAIN_BEACON_PROPOSER} from "@lodestar/params";
import {computeSigningRoot} from "@lodestar/state-transition";
import {ssz, type deneb, type electra, type fulu, type phase0} from "@lodestar/types";
import {type ChainEnv, copyBlock, createChainEnv} from "./chainEnv.ts";

/** A block of `slot` with `commitments` blob commitments (not importable: only its header is used), signed as a header. */
async function blockWithBlobs(env: ChainEnv, slot: number, commitments: number, edit?: (h: phase0.BeaconBlockHeader) => void, signer?: number) {
  const produced = await env.produceBlock(slot);
  const block = copyBlock(env.config, produced.message) as electra.BeaconBlock;
  block.body.blobKzgCommitments = Array.from({length: commitments}, (_, i) => new Uint8Array(48).fill(i + 1));
  const bodyType = env.config.getPostDenebForkTypes(slot).BeaconBlockBody;
  const header: phase0.BeaconBlockHeader = {slot, proposerIndex: block.proposerIndex, parentRoot: block.parentRoot, stateRoot: block.stateRoot, bodyRoot: bodyType.hashTreeRoot(block.body as never)};
  edit?.(header);
  const signingRoot = computeSigningRoot(ssz.phase0.BeaconBlockHeader, header, env.config.getDomain(slot, DOMAIN_BEACON_PROPOSER, slot));
  const signedBlockHeader = {message: header, signature: env.sign(signer ?? header.proposerIndex, signingRoot)};
  const proof = (path: (string | number)[]) => new Tree(bodyType.toViewDU(block.body as never).node).getSingleProof(bodyType.getPathInfo(path).gindex);
  return {block, signedBlockHeader, proof};
}

describe("data_column_sidecar gossip validation (fulu)", () => {
  let env: ChainEnv;
  beforeAll(async () => {
    env = await createChainEnv("fulu");
    env.setTime(1, 100);
    await env.chain.importBlock(await env.produceBlock(1));
    env.setTime(2, 100);
  }, 60_000);
  afterAll(() => env.close());

  async function sidecar(opts: {index?: number; commitments?: number; cells?: number; edit?: (h: phase0.BeaconBlockHeader) => void; signer?: number} = {}): Promise<fulu.DataColumnSidecar> {
    const count = opts.commitments ?? 2;
    const {block, signedBlockHeader, proof} = await blockWithBlobs(env, 2, count, opts.edit, opts.signer);
    return {
      index: opts.index ?? 5,
      column: Array.from({length: opts.cells ?? count}, () => ssz.fulu.Cell.defaultValue()),
      kzgCommitments: block.body.blobKzgCommitments,
      kzgProofs: Array.from({length: count}, () => new Uint8Array(48)),
      signedBlockHeader,
      kzgCommitmentsInclusionProof: count > 0 ? proof(["blobKzgCommitments"]) : Array.from({length: 4}, () => new Uint8Array(32)),
    };
  }
  const validate = async (s: fulu.DataColumnSidecar, subnet = s.index % 128) => env.validators.data_column_sidecar(env.topic("data_column_sidecar", subnet), s, "peer");

  it("checks every rule it can and IGNOREs what it cannot finish (the KZG proofs): never ACCEPT, never forward", async () => {
    expect(await validate(await sidecar())).toEqual({result: "IGNORE", reason: expect.stringMatching(/KZG proofs cannot be verified/)});
  });

  it("REJECTs a malformed sidecar, the wrong subnet, a bad inclusion proof, a bad header signature or proposer", async () => {
    expect(await validate(await sidecar({index: 128}), 0)).toMatchObject({result: "REJECT", reason: expect.stringMatching(/column index 128/)});
    expect(await validate(await sidecar({commitments: 0}))).toMatchObject({result: "REJECT", reason: "sidecar has no KZG commitments"});
    expect(await validate(await sidecar({cells: 1}))).toMatchObject({result: "REJECT", reason: expect.stringMatching(/1 cells and 2 proofs for 2 commitments/)});
    expect(await validate(await sidecar(), 6)).toMatchObject({result: "REJECT", reason: expect.stringMatching(/belongs to subnet 5, not 6/)});
    const tampered = await sidecar();
    tampered.kzgCommitments = [tampered.kzgCommitments[1], tampered.kzgCommitments[0]];
    expect(await validate(tampered)).toMatchObject({result: "REJECT", reason: "invalid KZG commitments inclusion proof"});
    expect(await validate(await sidecar({signer: 0}))).toMatchObject({result: "REJECT", reason: expect.stringMatching(/invalid proposer signature/)});
    const other = await sidecar({edit: (h) => (h.proposerIndex = (h.proposerIndex + 1) % 64)});
    expect(await validate(other)).toMatchObject({result: "REJECT", reason: expect.stringMatching(/is not the proposer of slot 2/)});
  });

  it("IGNOREs an unknown parent (flagged for sync) and a future slot", async () => {
    const orphan = await sidecar({edit: (h) => (h.parentRoot = new Uint8Array(32).fill(0xaa))});
    expect(await validate(orphan)).toMatchObject({result: "IGNORE", parentUnknown: true, unknownBlockRoot: "0x" + "aa".repeat(32)});
    const s = await sidecar();
    env.setTime(1, 100);
    expect(await validate(s)).toMatchObject({result: "IGNORE", reason: expect.stringMatching(/future/)});
    env.setTime(2, 100);
  });

  it("REJECTs blob sidecars from fulu on", async () => {
    const blob = ssz.deneb.BlobSidecar.defaultValue();
    blob.signedBlockHeader.message.slot = 2;
    expect(await env.validators.blob_sidecar(env.topic("blob_sidecar", 0), blob, "peer")).toMatchObject({result: "REJECT", reason: expect.stringMatching(/no blob sidecars at fulu/)});
  });
});

describe("blob_sidecar gossip validation (electra)", () => {
  let env: ChainEnv;
  beforeAll(async () => {
    env = await createChainEnv("electra");
    env.setTime(2, 100);
  }, 60_000);
  afterAll(() => env.close());

  async function blobSidecar(index: number, tamper = false): Promise<deneb.BlobSidecar> {
    const {block, signedBlockHeader, proof} = await blockWithBlobs(env, 2, 3);
    const inclusion = proof(["blobKzgCommitments", index]);
    if (tamper) inclusion[0] = new Uint8Array(32).fill(7);
    return {index, blob: ssz.deneb.Blob.defaultValue(), kzgCommitment: block.body.blobKzgCommitments[index], kzgProof: new Uint8Array(48), signedBlockHeader, kzgCommitmentInclusionProof: inclusion};
  }
  const validate = (s: deneb.BlobSidecar, subnet = s.index % env.config.BLOB_SIDECAR_SUBNET_COUNT_ELECTRA) => env.validators.blob_sidecar(env.topic("blob_sidecar", subnet), s, "peer");

  it("verifies the index, subnet and inclusion proof, and IGNOREs what needs the KZG proof", async () => {
    expect(await validate(await blobSidecar(2))).toMatchObject({result: "IGNORE", reason: expect.stringMatching(/KZG proofs cannot be verified/)});
    expect(await validate(await blobSidecar(2, true))).toMatchObject({result: "REJECT", reason: "invalid KZG commitment inclusion proof"});
    expect(await validate(await blobSidecar(1), 2)).toMatchObject({result: "REJECT", reason: expect.stringMatching(/belongs to subnet 1, not 2/)});
    const tooHigh = await blobSidecar(0);
    tooHigh.index = env.config.MAX_BLOBS_PER_BLOCK_ELECTRA;
    expect(await validate(tooHigh, 0)).toMatchObject({result: "REJECT", reason: expect.stringMatching(/blob index 9 is not below 9/)});
  });
});
