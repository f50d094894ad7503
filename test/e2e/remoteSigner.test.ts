// suite: alone (1-second slots: the chain must go on in the slots after the signer is killed)
import {afterAll, describe, expect, it} from "@jest/globals";
import {readFileSync} from "node:fs";
import {join} from "node:path";
import {validateKeymanagerRequest, validateKeymanagerResponse} from "../conformance/keymanagerOpenapi.ts";
import {interopPubkey, writeLighthouseLayout} from "../keystoreFiles.ts";
import {NodeProcess, getJson, restNodeArgs, tempDataDir} from "./nodeProcess.ts";

// a chain of 32 validators, the second half ours (signed remotely)
const OURS = Array.from({length: 16}, (_, i) => 16 + i);

/**
 * A dev chain (1-second slots) half of whose validators sign through `beacon-gateway
 * remote-signer`: `validator --remote-signer` takes the signer's keys, its blocks and
 * attestations land at the node, the keymanager API lists, imports and deletes remote keys
 * (every request and answer checked against the keymanager OpenAPI), and once the signer is
 * killed the duties are skipped with a log naming it while the client runs on.
 */
describe("validators signing through a remote signer", () => {
  const files = tempDataDir("rsfiles");
  const nodeData = tempDataDir("rsnode");
  const procs: NodeProcess[] = [];
  afterAll(async () => {
    for (const p of procs) await p.stop("SIGKILL");
    files.remove();
    nodeData.remove();
  });

  it(
    "blocks and attestations signed remotely land; remote keys listed, imported, deleted; the signer killed: duties skipped with a clear log, no crash",
    async () => {
      const {keys, secrets} = await writeLighthouseLayout(files.dir, OURS);
      const signer = new NodeProcess(["remote-signer", "--keystores", keys, "--secrets", secrets, "--port", "0"]);
      procs.push(signer);
      const node = new NodeProcess(restNodeArgs(nodeData.dir, ["--seconds-per-slot", "1", "--validators", "32", "--dev-validators", "0..15"]));
      procs.push(node);
      const listening = await signer.waitForLog((l) => l.msg === "Remote signer (stand-in) listening", 30_000, "remote signer start");
      expect(listening.keys).toBe(OURS.length);
      const signerUrl = `http://127.0.0.1:${listening.port}`;
      const url = await node.restUrl();
      const vcData = join(files.dir, "vc");
      const vc = new NodeProcess(["validator", "--beacon-node", url, "--remote-signer", signerUrl, "--data-dir", vcData, "--keymanager", "--keymanager-port", "0"]);
      procs.push(vc);
      const started = await vc.waitForLog((l) => l.msg === "Validator client started", 40_000, "validator client start");
      expect(started).toMatchObject({validators: OURS.length, remote: OURS.length, interop: 0, keystores: 0});

      // blocks: half the proposers are ours
      const published = await vc.waitForLog((l) => l.msg === "Published block", 20_000, "a block signed remotely");
      const block = await getJson(url, `/eth/v2/beacon/blocks/${published.slot}`);
      expect(Number(block.body.data.message.proposer_index)).toBe(published.validatorIndex);
      expect(OURS).toContain(published.validatorIndex);
      // attestations: the node saw our validators live in the epoch they attested in
      const attested = await vc.waitForLog((l) => l.msg === "Published attestations", 10_000, "attestations signed remotely");
      const epoch = Math.floor((attested.slot as number) / 8);
      const liveness = await fetch(`${url}/eth/v1/validator/liveness/${epoch}`, {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(OURS.map(String))});
      const live = ((await liveness.json()) as {data: {index: string; is_live: boolean}[]}).data.filter((v) => v.is_live);
      expect(live.length).toBeGreaterThanOrEqual(attested.count as number);

      // the keymanager API's remote keys
      const token = readFileSync(join(vcData, "api-token.txt"), "utf8").trim();
      const km = `http://127.0.0.1:${(await vc.waitForLog((l) => l.msg === "Keymanager API listening", 5000, "keymanager")).port}`;
      const call = async (operationId: string, method: string, body?: unknown): Promise<any> => {
        if (body !== undefined) expect(validateKeymanagerRequest(operationId, body)).toEqual([]);
        const res = await fetch(`${km}/eth/v1/remotekeys`, {method, headers: {Authorization: `Bearer ${token}`, "Content-Type": "application/json"}, body: body === undefined ? undefined : JSON.stringify(body)});
        const json = await res.json();
        expect([operationId, validateKeymanagerResponse(operationId, res.status, json)]).toEqual([operationId, []]);
        return json;
      };
      const listed = await call("listRemoteKeys", "GET");
      expect(listed.data).toHaveLength(OURS.length);
      expect(listed.data).toContainEqual({pubkey: interopPubkey(20), url: signerUrl, readonly: true});
      const imported = await call("importRemoteKeys", "POST", {remote_keys: [{pubkey: interopPubkey(100), url: signerUrl}, {pubkey: interopPubkey(20), url: signerUrl}]});
      expect(imported.data).toEqual([{status: "imported"}, {status: "duplicate"}]);
      expect((await call("listRemoteKeys", "GET")).data).toContainEqual({pubkey: interopPubkey(100), url: signerUrl, readonly: false});
      expect(JSON.parse(readFileSync(join(vcData, "remote-keys.json"), "utf8"))).toEqual([{pubkey: interopPubkey(100), url: signerUrl}]);
      const deleted = await call("deleteRemoteKeys", "DELETE", {pubkeys: [interopPubkey(100), interopPubkey(20), interopPubkey(200)]});
      expect(deleted.data).toEqual([{status: "deleted"}, {status: "error", message: expect.stringMatching(/--remote-signer/)}, {status: "not_found"}]);
      expect((await call("listRemoteKeys", "GET")).data).toHaveLength(OURS.length);

      // the signer killed: duties fail naming it, the client runs on
      const before = vc.logs.length;
      await signer.stop("SIGKILL");
      const failed = await vc.waitForLog(
        (l) => vc.logs.indexOf(l) >= before && l.level >= 50 && typeof l.error === "string" && l.error.includes(`remote signer ${signerUrl}: unreachable`),
        10_000,
        "a duty failing on the killed signer"
      );
      expect(failed.msg).toMatch(/failed|not signed/);
      // and once, the signer's own state
      expect(vc.logs.slice(before).filter((l) => l.msg.startsWith("Remote signer not answering"))).toEqual([
        expect.objectContaining({level: 50, url: signerUrl, msg: "Remote signer not answering: the duties of its keys are skipped until it answers"}),
      ]);
      await node.waitForLog((l) => l.msg === "imported block" && (l.slot as number) >= (failed.slot as number) + 2, 30_000, "the chain going on");
      expect(vc.proc.exitCode).toBeNull();
      expect((await vc.stop("SIGTERM")).code).toBe(0);
    },
    90_000
  );
});
