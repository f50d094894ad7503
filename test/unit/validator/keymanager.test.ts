// suite: alone (keys imported while duties run on a real-time slot clock)
import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import {existsSync, mkdtempSync, readFileSync, rmSync, statSync} from "node:fs";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {Writable} from "node:stream";
import {PublicKey, Signature, verify} from "@chainsafe/blst";
import {DOMAIN_VOLUNTARY_EXIT, SLOTS_PER_EPOCH} from "@lodestar/params";
import {computeDomain, computeSigningRoot, interopSecretKey} from "@lodestar/state-transition";
import {ssz} from "@lodestar/types";
import {initLogging, parseLogDirective} from "../../../src/log.ts";
import {parseInterchange} from "../../../src/validator/interchange.ts";
import {startValidatorClient, type ValidatorClient} from "../../../src/validator/index.ts";
import {KEYMANAGER_ROUTES} from "../../../src/validator/keymanager/routes.ts";
import {startStandInSigner} from "../../../src/validator/remote/standInSigner.ts";
import {SlashingProtection, SlashingProtectionError} from "../../../src/validator/slashingProtection.ts";
import {keymanagerOperations, validateKeymanagerRequest, validateKeymanagerResponse} from "../../conformance/keymanagerOpenapi.ts";
import {interopKeystore, interopPubkey, writeLighthouseLayout} from "../../keystoreFiles.ts";
import {FakeBeaconApi, feeRecipient, genesisValidatorsRoot} from "./fakeBeaconApi.ts";

/** The fake node, recording the graffiti of each block it is asked for. */
class RecordingApi extends FakeBeaconApi {
  readonly graffitiBySlot = new Map<number, Uint8Array | undefined>();
  override async produceBlock(slot: number, randaoReveal: Uint8Array, graffiti?: Uint8Array) {
    this.graffitiBySlot.set(slot, graffiti);
    return super.produceBlock(slot, randaoReveal);
  }
}

const ZERO_ADDRESS = "0x" + "00".repeat(20);
const NEW_RECIPIENT = "0x" + "ab".repeat(20);
const hex = (b: Uint8Array): string => "0x" + Buffer.from(b).toString("hex");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, timeoutMs: number, probe: () => boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/**
 * The keymanager API of a running validator client (over a stand-in beacon node, 1-second
 * slots), over real HTTP: every request and answer checked against the spec's OpenAPI schemas
 * (vendor/keymanager-apis), every status case, and the changes seen at the next duties.
 */
describe("keymanager API", () => {
  let root: string;
  let api: RecordingApi;
  let client: ValidatorClient;
  let base: string;
  let token: string;
  let keysDir: string;
  let secretsDir: string;
  /** the slot at which the per-key settings were made */
  let settingsSlot = 0;
  /** the slot at which keys 4 and 6 were imported */
  let importSlot = 0;
  const errorLogs: {validatorIndex?: number; error?: string; msg: string}[] = [];
  const currentSlot = (): number => Math.floor(Date.now() / 1000) - api.genesisTime;

  /** `invalid`: a request the spec's schema refuses (sent to see it refused) */
  async function call(operationId: string, path: string, body?: unknown, auth: string | null = token, invalid = false): Promise<{status: number; body: any; headers: Headers}> {
    const route = KEYMANAGER_ROUTES.find((r) => r.operationId === operationId)!;
    if (body !== undefined) expect(validateKeymanagerRequest(operationId, body).length > 0).toBe(invalid);
    const res = await fetch(base + path, {
      method: route.method,
      headers: {...(auth !== null ? {Authorization: `Bearer ${auth}`} : {}), ...(body !== undefined ? {"Content-Type": "application/json"} : {})},
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    const json = text ? JSON.parse(text) : undefined;
    expect([operationId, validateKeymanagerResponse(operationId, res.status, json)]).toEqual([operationId, []]);
    return {status: res.status, body: json, headers: res.headers};
  }

  beforeAll(async () => {
    // the refusals of slashing protection are logged as errors: expected here, kept out of the test output
    initLogging({directive: parseLogDirective("ERROR"), format: "json", destination: new Writable({
        write: (chunk, _encoding, done) => {
          for (const line of String(chunk).split("\n")) if (line) errorLogs.push(JSON.parse(line));
          done();
        },
      }),
    });
    root = mkdtempSync(join(tmpdir(), "keymanager-"));
    ({keys: keysDir, secrets: secretsDir} = await writeLighthouseLayout(join(root, "files"), [2, 3]));
    api = new RecordingApi("electra", Math.floor(Date.now() / 1000) - 2 * SLOTS_PER_EPOCH);
    client = await startValidatorClient({
      api,
      indices: [0, 1],
      keystores: {keystoresDir: keysDir, secretsDir},
      keymanager: {port: 0, address: "127.0.0.1"},
      dataDir: join(root, "vc"),
      feeRecipient,
      graffiti: "default graffiti",
    });
    base = `http://127.0.0.1:${client.keymanagerPort}`;
    token = readFileSync(join(root, "vc", "api-token.txt"), "utf8").trim();
  });

  afterAll(async () => {
    await client?.stop();
    rmSync(root, {recursive: true, force: true});
  });

  it("covers every route of the spec, and each answers 401 without the token and 403 with another (token file 0600, 256 bits)", async () => {
    expect(KEYMANAGER_ROUTES.map((r) => `${r.method} ${r.path} ${r.operationId}`).sort()).toEqual(
      keymanagerOperations().map((op) => `${op.method} ${op.path} ${op.operationId}`).sort()
    );
    expect(statSync(join(root, "vc", "api-token.txt")).mode & 0o777).toBe(0o600);
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    for (const route of KEYMANAGER_ROUTES) {
      const path = route.path.replace("{pubkey}", interopPubkey(2));
      expect((await call(route.operationId, path, undefined, null)).status).toBe(401);
      expect((await call(route.operationId, path, undefined, "0".repeat(64))).status).toBe(403);
    }
    // CORS is off unless --keymanager-allow-origin
    expect((await call("listKeys", "/eth/v1/keystores")).headers.get("access-control-allow-origin")).toBeNull();
  });

  it("with --keymanager-allow-origin: CORS headers on answers and preflights answered without the token", async () => {
    const other = await startValidatorClient({api, indices: [], keymanager: {port: 0, address: "127.0.0.1", allowOrigin: "https://ui.example"}, dataDir: join(root, "cors")});
    try {
      const url = `http://127.0.0.1:${other.keymanagerPort}/eth/v1/keystores`;
      const preflight = await fetch(url, {method: "OPTIONS", headers: {Origin: "https://ui.example", "Access-Control-Request-Method": "DELETE"}});
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get("access-control-allow-origin")).toBe("https://ui.example");
      expect(preflight.headers.get("access-control-allow-methods")).toContain("DELETE");
      expect(preflight.headers.get("access-control-allow-headers")).toContain("Authorization");
      const otherToken = readFileSync(join(root, "cors", "api-token.txt"), "utf8").trim();
      expect(otherToken).not.toBe(token);
      const listed = await fetch(url, {headers: {Authorization: `Bearer ${otherToken}`}});
      expect(listed.headers.get("access-control-allow-origin")).toBe("https://ui.example");
      expect(await listed.json()).toEqual({data: []});
    } finally {
      await other.stop();
    }
  });

  it("lists the keys: interop ones read-only, keystores with their derivation path", async () => {
    const {status, body} = await call("listKeys", "/eth/v1/keystores");
    expect(status).toBe(200);
    expect(body.data).toEqual(
      expect.arrayContaining([
        {validating_pubkey: interopPubkey(0), readonly: true},
        {validating_pubkey: interopPubkey(2), derivation_path: "m/12381/3600/2/0/0", readonly: false},
      ])
    );
    expect(body.data).toHaveLength(4);
  });

  it("imports keystores with their slashing protection: imported, duplicate, error (wrong password, not a keystore); a foreign interchange is a 400 changing nothing", async () => {
    // key 4's history is old (it signs on), key 6's is ahead of the chain (it must sign nothing)
    const interchange = (root: string) =>
      JSON.stringify({
        metadata: {interchange_format_version: "5", genesis_validators_root: root},
        data: [
          {pubkey: interopPubkey(4), signed_blocks: [{slot: "1"}], signed_attestations: [{source_epoch: "0", target_epoch: "1"}]},
          {pubkey: interopPubkey(6), signed_blocks: [{slot: "1000"}], signed_attestations: [{source_epoch: "500", target_epoch: "501"}]},
        ],
      });
    const keystore = async (i: number, password: string) => JSON.stringify(await interopKeystore(i, password));
    const keystores = [await keystore(4, "four"), await keystore(2, "two"), await keystore(5, "five"), "{}", await keystore(6, "six")];
    const passwords = ["four", "two", "not five", "", "six"];
    const foreign = await call("importKeystores", "/eth/v1/keystores", {keystores, passwords, slashing_protection: interchange("0x" + "11".repeat(32))});
    expect(foreign.status).toBe(400);
    expect(foreign.body.message).toMatch(/genesis validators root/);
    expect((await call("listKeys", "/eth/v1/keystores")).body.data).toHaveLength(4);
    expect((await call("importKeystores", "/eth/v1/keystores", {keystores: [keystores[0]], passwords: []})).status).toBe(400);

    const {status, body} = await call("importKeystores", "/eth/v1/keystores", {keystores, passwords, slashing_protection: interchange(hex(genesisValidatorsRoot))});
    expect(status).toBe(200);
    expect(body.data.map((d: {status: string}) => d.status)).toEqual(["imported", "duplicate", "error", "error", "imported"]);
    expect(body.data[2].message).toMatch(/wrong password/);
    expect(body.data[3].message).toMatch(/not an EIP-2335 keystore/);
    const stored = join(root, "vc", "keystores", interopPubkey(4), "voting-keystore.json");
    expect(existsSync(stored) && existsSync(`${stored}.lock`)).toBe(true);
    expect(readFileSync(join(root, "vc", "secrets", interopPubkey(4)), "utf8")).toBe("four");
    expect((await call("listKeys", "/eth/v1/keystores")).body.data).toHaveLength(6);
    importSlot = currentSlot();
  });

  it("fee recipient, gas limit and graffiti per key: set, read, deleted back to the default, persisted; bad values 400, unknown keys 404", async () => {
    const key = interopPubkey(2);
    const fee = `/eth/v1/validator/${key}/feerecipient`;
    expect((await call("listFeeRecipient", fee)).body.data).toEqual({pubkey: key, ethaddress: hex(feeRecipient)});
    expect((await call("setFeeRecipient", fee, {ethaddress: NEW_RECIPIENT})).status).toBe(202);
    expect((await call("listFeeRecipient", fee)).body.data.ethaddress).toBe(NEW_RECIPIENT);
    expect((await call("setFeeRecipient", fee, {ethaddress: ZERO_ADDRESS})).status).toBe(400);
    expect((await call("setFeeRecipient", fee, {ethaddress: "0x12"}, token, true)).status).toBe(400);
    expect((await call("listFeeRecipient", `/eth/v1/validator/${interopPubkey(7)}/feerecipient`)).status).toBe(404);
    expect((await call("listFeeRecipient", "/eth/v1/validator/0x1234/feerecipient")).status).toBe(400);

    const gas = `/eth/v1/validator/${key}/gas_limit`;
    expect((await call("getGasLimit", gas)).body.data).toEqual({pubkey: key, gas_limit: "60000000"});
    expect((await call("setGasLimit", gas, {gas_limit: "36000000"})).status).toBe(202);
    expect((await call("getGasLimit", gas)).body.data.gas_limit).toBe("36000000");
    expect((await call("setGasLimit", gas, {gas_limit: "-1"}, token, true)).status).toBe(400);
    expect((await call("deleteGasLimit", gas)).status).toBe(204);
    expect((await call("getGasLimit", gas)).body.data.gas_limit).toBe("60000000");

    const graffiti = `/eth/v1/validator/${key}/graffiti`;
    expect((await call("getGraffiti", graffiti)).body.data).toEqual({pubkey: key, graffiti: "default graffiti"});
    expect((await call("setGraffiti", graffiti, {graffiti: "key two"})).status).toBe(202);
    expect((await call("setGraffiti", graffiti, {graffiti: "x".repeat(33)})).status).toBe(400);
    expect((await call("getGraffiti", graffiti)).body.data.graffiti).toBe("key two");
    settingsSlot = currentSlot();
    // the key's fee recipient and graffiti are on disk
    expect(JSON.parse(readFileSync(join(root, "vc", "proposer-settings.json"), "utf8"))[key]).toEqual({feeRecipient: NEW_RECIPIENT, graffiti: "key two"});
    const other = `/eth/v1/validator/${interopPubkey(3)}/feerecipient`;
    expect((await call("setFeeRecipient", other, {ethaddress: NEW_RECIPIENT})).status).toBe(202);
    expect((await call("deleteFeeRecipient", other)).status).toBe(204);
    expect((await call("listFeeRecipient", other)).body.data.ethaddress).toBe(hex(feeRecipient));
  });

  it("signs a voluntary exit in capella's domain (EIP-7044), verifiable with the key; unknown keys 404, bad epochs 400", async () => {
    const {status, body} = await call("signVoluntaryExit", `/eth/v1/validator/${interopPubkey(2)}/voluntary_exit?epoch=5`);
    expect(status).toBe(200);
    expect(body.data.message).toEqual({epoch: "5", validator_index: "2"});
    const domain = computeDomain(DOMAIN_VOLUNTARY_EXIT, api.config.CAPELLA_FORK_VERSION, genesisValidatorsRoot);
    const root = computeSigningRoot(ssz.phase0.VoluntaryExit, {epoch: 5, validatorIndex: 2}, domain);
    expect(verify(root, PublicKey.fromHex(interopPubkey(2)), Signature.fromHex(body.data.signature))).toBe(true);
    expect((await call("signVoluntaryExit", `/eth/v1/validator/${interopPubkey(7)}/voluntary_exit`)).status).toBe(404);
    expect((await call("signVoluntaryExit", `/eth/v1/validator/${interopPubkey(2)}/voluntary_exit?epoch=x`)).status).toBe(400);
  });

  it("remote keys: imported (persisted, with its URL), duplicate, error; used to sign at once through its signer; deleted, then not_found; local keys' routes leave them alone", async () => {
    const signer = await startStandInSigner(new Map([[interopPubkey(7), interopSecretKey(7)]]), {port: 0, address: "127.0.0.1"});
    try {
      const url = `http://127.0.0.1:${signer.port}`;
      expect((await call("listRemoteKeys", "/eth/v1/remotekeys")).body).toEqual({data: []});
      const imported = await call("importRemoteKeys", "/eth/v1/remotekeys", {
        remote_keys: [{pubkey: interopPubkey(7), url}, {pubkey: interopPubkey(7), url}, {pubkey: interopPubkey(8), url: "ftp://signer.example"}, {pubkey: interopPubkey(2), url}],
      });
      expect(imported.body.data).toEqual([
        {status: "imported"},
        {status: "duplicate"},
        {status: "error", message: expect.stringMatching(/not an http\(s\) URL/)},
        {status: "duplicate"},
      ]);
      expect((await call("listRemoteKeys", "/eth/v1/remotekeys")).body).toEqual({data: [{pubkey: interopPubkey(7), url, readonly: false}]});
      expect(JSON.parse(readFileSync(join(root, "vc", "remote-keys.json"), "utf8"))).toEqual([{pubkey: interopPubkey(7), url}]);
      expect((await call("listKeys", "/eth/v1/keystores")).body.data.map((k: {validating_pubkey: string}) => k.validating_pubkey)).not.toContain(interopPubkey(7));

      // signed by the remote signer, and the signature checked: an exit of the imported key
      const exit = await call("signVoluntaryExit", `/eth/v1/validator/${interopPubkey(7)}/voluntary_exit?epoch=5`);
      expect(exit.status).toBe(200);
      const domain = computeDomain(DOMAIN_VOLUNTARY_EXIT, api.config.CAPELLA_FORK_VERSION, genesisValidatorsRoot);
      const root7 = computeSigningRoot(ssz.phase0.VoluntaryExit, {epoch: 5, validatorIndex: 7}, domain);
      expect(verify(root7, PublicKey.fromHex(interopPubkey(7)), Signature.fromHex(exit.body.data.signature))).toBe(true);

      // a remote key is not deleted through the local keys' route
      expect((await call("deleteKeys", "/eth/v1/keystores", {pubkeys: [interopPubkey(7)]})).body.data).toEqual([{status: "error", message: expect.stringMatching(/remotekeys/)}]);
      expect((await call("deleteRemoteKeys", "/eth/v1/remotekeys", {pubkeys: [interopPubkey(7), interopPubkey(2)]})).body.data).toEqual([{status: "deleted"}, {status: "not_found"}]);
      expect((await call("deleteRemoteKeys", "/eth/v1/remotekeys", {pubkeys: [interopPubkey(7)]})).body.data).toEqual([{status: "not_found"}]);
      expect((await call("listRemoteKeys", "/eth/v1/remotekeys")).body).toEqual({data: []});
      expect(JSON.parse(readFileSync(join(root, "vc", "remote-keys.json"), "utf8"))).toEqual([]);
      expect((await call("signVoluntaryExit", `/eth/v1/validator/${interopPubkey(7)}/voluntary_exit`)).status).toBe(404);
      // a body the spec's schema refuses changes nothing: a 400 (the spec lists no 400 for these routes: the answer is the keymanager API's ErrorResponse, unchecked)
      expect(validateKeymanagerRequest("importRemoteKeys", {remote_keys: [{url}]})).not.toEqual([]);
      const refused = await fetch(base + "/eth/v1/remotekeys", {method: "POST", headers: {Authorization: `Bearer ${token}`, "Content-Type": "application/json"}, body: JSON.stringify({remote_keys: [{url}]})});
      expect([refused.status, await refused.json()]).toEqual([400, {message: expect.stringMatching(/remote_keys\[0\]\.pubkey must be a string/)}]);
      expect((await call("listRemoteKeys", "/eth/v1/remotekeys")).body).toEqual({data: []});
    } finally {
      await signer.close();
    }
  });

  // The orders of fetches and key changes that once lost the imported key's duties are driven one
  // by one in keyChanges.test.ts; here the whole client over HTTP.
  it(
    "the next duties use the changes: the imported key attests, the fee recipient is announced, the key's graffiti goes in its block; deleted keys sign nothing more and their history, imported elsewhere, refuses what they signed",
    async () => {
      // validator i proposes and attests at slot i of each epoch (the stand-in's duties)
      const attested = (index: number) => api.attestations.some((a) => (a as {attesterIndex?: number}).attesterIndex === index);
      // an imported key attests at its next duty slot, within an epoch and a slot to resolve it
      // (the bound leaves room for a duty slot skipped by a loaded machine: it waits only until then)
      await until("attestations of keys 2 and 4 (imported)", (2 * SLOTS_PER_EPOCH + 2) * 1000, () => attested(2) && attested(4));
      expect(api.proposerPreparations.some((p) => p.validatorIndex === 4)).toBe(true);
      // key 2's fee recipient, set after the import, is announced from the slot after it was set (key 4
      // may have attested in that slot already: its duty can be in the slot after the import)
      const newRecipient = {validatorIndex: 2, feeRecipient: Buffer.from(NEW_RECIPIENT.slice(2), "hex")};
      await until("key 2's fee recipient announced", 4000, () => api.proposerPreparations.some((p) => p.validatorIndex === 2 && Buffer.from(p.feeRecipient).equals(newRecipient.feeRecipient)));
      expect(api.proposerPreparations).toContainEqual(newRecipient);
      const blockOfKey2 = () => [...api.graffitiBySlot.keys()].find((slot) => slot % SLOTS_PER_EPOCH === 2 && slot > settingsSlot);
      await until("a block of key 2", 12_000, () => blockOfKey2() !== undefined);
      const slotOfKey2 = blockOfKey2()!;
      expect(Buffer.from(api.graffitiBySlot.get(slotOfKey2)!).toString().replace(/\0+$/, "")).toBe("key two");

      // key 6 had duties too (slot 6 of each epoch): its imported history refused them all
      const dutySlotOf6 = importSlot + 1 + ((6 - ((importSlot + 1) % SLOTS_PER_EPOCH) + SLOTS_PER_EPOCH) % SLOTS_PER_EPOCH);
      await until("key 6's duty slot past", 12_000, () => currentSlot() > dutySlotOf6 + 1);
      expect(attested(6) || api.blocks.some((b) => b.message.proposerIndex === 6)).toBe(false);
      expect(errorLogs.some((l) => l.validatorIndex === 6 && /watermark 500->501/.test(l.error ?? ""))).toBe(true);

      const pubkeys = [interopPubkey(3), interopPubkey(0), interopPubkey(4), interopPubkey(7), interopPubkey(2), interopPubkey(6)];
      const {status, body} = await call("deleteKeys", "/eth/v1/keystores", {pubkeys});
      const deletedAt = currentSlot();
      expect(status).toBe(200);
      expect(body.data.map((d: {status: string}) => d.status)).toEqual(["deleted", "error", "deleted", "not_found", "deleted", "deleted"]);
      const exported = parseInterchange(JSON.parse(body.slashing_protection));
      expect(exported.genesisValidatorsRoot).toBe(hex(genesisValidatorsRoot));
      const history = new Map(exported.data.map((h) => [h.pubkey, h]));
      expect(history.get(interopPubkey(6))!.blocks.map((b) => b.slot)).toEqual([1000]);
      expect(history.get(interopPubkey(4))!.attestations.length).toBeGreaterThan(0);
      const signedByKey2 = api.attestations.filter((a) => (a as {attesterIndex?: number}).attesterIndex === 2);
      const lastTarget = Math.max(...signedByKey2.map((a) => a.data.target.epoch));
      expect(history.get(interopPubkey(2))!.attestations.map((a) => a.target)).toContain(lastTarget);
      // key 3's files are gone (its keystore, its password, its lock), the key is no longer listed
      expect(existsSync(join(keysDir, interopPubkey(3)))).toBe(false);
      expect(existsSync(join(secretsDir, interopPubkey(3)))).toBe(false);
      expect((await call("listKeys", "/eth/v1/keystores")).body.data.map((k: {validating_pubkey: string}) => k.validating_pubkey).sort()).toEqual(
        [interopPubkey(0), interopPubkey(1)].sort()
      );
      // deleted again: its history is still returned
      const again = await call("deleteKeys", "/eth/v1/keystores", {pubkeys: [interopPubkey(2)]});
      expect(again.body.data).toEqual([{status: "not_active"}]);
      expect(parseInterchange(JSON.parse(again.body.slashing_protection)).data.map((h) => h.pubkey)).toEqual([interopPubkey(2)]);
      expect((await call("listFeeRecipient", `/eth/v1/validator/${interopPubkey(2)}/feerecipient`)).status).toBe(404);

      // imported into another client's slashing protection, the history refuses another vote for a target key 2 signed
      const elsewhere = await SlashingProtection.open(join(root, "elsewhere"));
      try {
        await elsewhere.importHistory(exported.genesisValidatorsRoot, exported.data);
        const vote = elsewhere.checkAndInsertAttestation(Buffer.from(interopPubkey(2).slice(2), "hex"), {sourceEpoch: lastTarget - 1, targetEpoch: lastTarget, signingRoot: new Uint8Array(32).fill(7)});
        await expect(vote).rejects.toBeInstanceOf(SlashingProtectionError);
      } finally {
        await elsewhere.close();
      }

      // a whole epoch later none of the deleted keys has signed anything more (each had a duty in it)
      await sleep((SLOTS_PER_EPOCH + 1) * 1000);
      const after = (i: number) => api.attestations.some((a) => (a as {attesterIndex?: number}).attesterIndex === i && a.data.slot > deletedAt) || api.blocks.some((b) => b.message.proposerIndex === i && b.message.slot > deletedAt);
      expect([2, 3, 4, 6].filter(after)).toEqual([]);
      // the keys kept still do
      expect(after(0) || after(1)).toBe(true);
    },
    60_000
  );
});
