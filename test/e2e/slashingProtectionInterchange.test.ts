import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import {execFile} from "node:child_process";
import {existsSync, mkdirSync, readFileSync} from "node:fs";
import {join} from "node:path";
import {fileURLToPath} from "node:url";
import {PublicKey, Signature, verify} from "@chainsafe/blst";
import {Ajv} from "ajv";
import {createBeaconConfig, type BeaconConfig} from "@lodestar/config";
import {DOMAIN_BEACON_ATTESTER} from "@lodestar/params";
import {computeDomain, computeSigningRoot} from "@lodestar/state-transition";
import {ssz, type phase0} from "@lodestar/types";
import {toHex} from "@lodestar/utils";
import {devChainConfig} from "../../src/config/chainConfig.ts";
import {ValidatorSigner} from "../../src/validator/signer.ts";
import {SlashingProtection, SlashingProtectionError, slashingProtectionDir} from "../../src/validator/slashingProtection.ts";
import {tempDataDir} from "./nodeProcess.ts";

/**
 * A user moving validators from one data dir to another with the real command, as separate
 * processes: `slashing-protection export` from the first, `import` into the second, then the
 * second's signer (the one the validator client signs with) refuses what would be slashable
 * given the first's history, and signs what is safe.
 */

const BIN = fileURLToPath(new URL("../../bin/beacon-gateway.js", import.meta.url));
const schema = JSON.parse(readFileSync(new URL("../unit/validator/interchange-cases/schema.json", import.meta.url), "utf8")) as object;
const chainConfig = devChainConfig({secondsPerSlot: 6, genesisFork: "phase0", forkEpochs: {}});
const GVR = new Uint8Array(32).fill(0x5a);
const OTHER_GVR = new Uint8Array(32).fill(0x5b);

function cli(...args: string[]): Promise<{code: number; stdout: string; stderr: string}> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, "slashing-protection", ...args], {timeout: 30_000}, (err, stdout, stderr) => {
      resolve({code: err ? ((err as {code?: number}).code ?? 1) : 0, stdout, stderr});
    });
  });
}

/** A signer over interop keys 0 and 1 on the records of `dataDir`, bound to the chain of `gvr`. */
async function openSigner(dataDir: string, gvr = GVR): Promise<{signer: ValidatorSigner; protection: SlashingProtection; config: BeaconConfig}> {
  const protection = await SlashingProtection.open(slashingProtectionDir(dataDir));
  await protection.bindToChain(gvr);
  const config = createBeaconConfig(chainConfig, gvr);
  return {signer: ValidatorSigner.fromInteropIndices(config, [0, 1], protection), protection, config};
}

const vote = (source: number, target: number, headByte: number): phase0.AttestationData => ({
  ...ssz.phase0.AttestationData.defaultValue(),
  slot: target * 8,
  beaconBlockRoot: new Uint8Array(32).fill(headByte),
  source: {epoch: source, root: new Uint8Array(32).fill(source)},
  target: {epoch: target, root: new Uint8Array(32).fill(target)},
});
const block = (slot: number, parentByte: number) => ({...ssz.phase0.BeaconBlock.defaultValue(), slot, proposerIndex: 0, parentRoot: new Uint8Array(32).fill(parentByte)});

async function refusal(promise: Promise<unknown>): Promise<string | null> {
  return promise.then(
    () => null,
    (e: unknown) => {
      if (e instanceof SlashingProtectionError) return e.kind;
      throw e;
    }
  );
}

describe("beacon-gateway slashing-protection export | import", () => {
  const data = tempDataDir("interchange");
  const from = join(data.dir, "from");
  const file = join(data.dir, "interchange.json");
  let key0: Uint8Array;

  beforeAll(async () => {
    // the old client's history: blocks up to slot 40, votes 1->2, 2->3, 3->5 for key 0, one vote for key 1
    const {signer, protection} = await openSigner(from);
    key0 = signer.pubkeys[0];
    await signer.signBlock(key0, block(33, 1));
    await signer.signBlock(key0, block(40, 2));
    await signer.signAttestationData(key0, vote(1, 2, 0xa1));
    await signer.signAttestationData(key0, vote(2, 3, 0xa2));
    await signer.signAttestationData(key0, vote(3, 5, 0xa3));
    await signer.signAttestationData(signer.pubkeys[1], vote(0, 1, 0xb1));
    await protection.close();
  }, 60_000);

  afterAll(() => data.remove());

  it("exports an EIP-3076 file of both validators' history", async () => {
    const res = await cli("export", "--data-dir", from, "--file", file);
    expect(res).toMatchObject({code: 0, stderr: ""});
    expect(res.stdout).toContain("2 validators");
    const json = JSON.parse(readFileSync(file, "utf8"));
    expect(new Ajv({strict: false}).validate(schema, json)).toBe(true);
    expect(json.metadata).toEqual({interchange_format_version: "5", genesis_validators_root: toHex(GVR)});
    const entry = json.data.find((d: {pubkey: string}) => d.pubkey === toHex(key0));
    expect(entry.signed_blocks).toEqual([{slot: "40", signing_root: expect.stringMatching(/^0x[0-9a-f]{64}$/)}]);
    expect(entry.signed_attestations.map((a: {source_epoch: string; target_epoch: string}) => `${a.source_epoch}->${a.target_epoch}`)).toEqual(["1->2", "2->3", "3->5"]);
  }, 60_000);

  it.each(["complete", "minimal"])("after an import of the %s form, the other data dir's signer refuses what the history forbids", async (form) => {
    const to = join(data.dir, `to-${form}`);
    const formFile = join(data.dir, `${form}.json`);
    expect((await cli("export", "--data-dir", from, "--file", formFile, "--format", form)).code).toBe(0);
    const res = await cli("import", "--data-dir", to, "--file", formFile);
    expect(res).toMatchObject({code: 0, stderr: ""});
    expect(res.stdout).toContain("2 validators");

    const {signer, protection, config} = await openSigner(to);
    try {
      expect(await refusal(signer.signBlock(key0, block(40, 9)))).toBe("double_proposal");
      expect(await refusal(signer.signBlock(key0, block(39, 9)))).toBe("old_proposal");
      expect(await refusal(signer.signAttestationData(key0, vote(3, 5, 0xff)))).toBe("double_vote");
      // surrounds 3->5 (and is at or below the imported history)
      expect(await refusal(signer.signAttestationData(key0, vote(2, 6, 0xff)))).not.toBeNull();
      expect(await refusal(signer.signAttestationData(key0, vote(1, 4, 0xff)))).not.toBeNull();
      expect(await refusal(signer.signAttestationData(signer.pubkeys[1], vote(0, 1, 0xff)))).not.toBeNull();
      // what is safe is signed, and the signature is the key's
      const next = vote(5, 6, 0xc1);
      const signature = await signer.signAttestationData(key0, next);
      const signingRoot = computeSigningRoot(ssz.phase0.AttestationData, next, computeDomain(DOMAIN_BEACON_ATTESTER, config.GENESIS_FORK_VERSION, GVR));
      expect(verify(signingRoot, PublicKey.fromBytes(key0), Signature.fromBytes(signature))).toBe(true);
      expect(await refusal(signer.signBlock(key0, block(41, 9)))).toBeNull();
    } finally {
      await protection.close();
    }
  }, 60_000);

  it("refuses, changing nothing, a file for another chain, a database in use and a node's data dir", async () => {
    const other = join(data.dir, "other-chain");
    const {protection} = await openSigner(other, OTHER_GVR);
    // held open, as by a running validator client
    const busy = await cli("import", "--data-dir", other, "--file", file);
    expect(busy.code).toBe(1);
    expect(busy.stderr).toContain("in use");
    expect(await protection.exportHistory()).toEqual([]);
    await protection.close();

    const wrongChain = await cli("import", "--data-dir", other, "--file", file);
    expect(wrongChain.code).toBe(1);
    expect(wrongChain.stderr).toContain("another chain");
    const reopened = await SlashingProtection.open(slashingProtectionDir(other));
    expect(await reopened.exportHistory()).toEqual([]);
    await reopened.close();

    // a node's data dir is not its validators' one: importing there would protect nothing
    const node = join(data.dir, "node");
    mkdirSync(join(node, "beacon"), {recursive: true});
    const nodeDir = await cli("import", "--data-dir", node, "--file", file);
    expect(nodeDir.code).toBe(1);
    expect(nodeDir.stderr).toContain(`the data dir of its validators is ${join(node, "validator")}`);
    expect(existsSync(slashingProtectionDir(node))).toBe(false);
  }, 60_000);
});
