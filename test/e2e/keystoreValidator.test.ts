import {afterAll, describe, expect, it} from "@jest/globals";
import {existsSync} from "node:fs";
import {join} from "node:path";
import {NodeProcess, restNodeArgs, tempDataDir} from "./nodeProcess.ts";
import {interopPubkey, writeLighthouseLayout} from "../keystoreFiles.ts";

/**
 * `beacon-gateway validator --keystores --secrets` as its own process: it signs with the
 * keystores' keys, locks them while it runs (a second client on them refuses to start, naming
 * the first one's pid) and removes its locks when it stops. A client started with
 * `--doppelganger-protection` on copies of the same keys finds them live and stops, having signed
 * nothing.
 */
describe("validator client with EIP-2335 keystores", () => {
  const nodeData = tempDataDir("ksnode");
  const files = tempDataDir("kskeys");
  const procs: NodeProcess[] = [];
  afterAll(async () => {
    for (const p of procs) await p.stop("SIGKILL");
    nodeData.remove();
    files.remove();
  });

  it(
    "attests with its keystores; a second client on the same keystores refuses to start naming the first one's pid; a third with doppelganger protection on copies stops naming an index, silent",
    async () => {
      const ours = [60, 61, 62, 63];
      const {keys, secrets} = await writeLighthouseLayout(files.dir, ours);
      const node = new NodeProcess(restNodeArgs(nodeData.dir, ["--seconds-per-slot", "1", "--dev-validators", "0..59"]));
      procs.push(node);
      const url = await node.restUrl();
      const vcArgs = (dataDir: string) => ["validator", "--beacon-node", url, "--keystores", keys, "--secrets", secrets, "--data-dir", join(files.dir, dataDir)];
      const first = new NodeProcess(vcArgs("vc1"));
      procs.push(first);
      const started = await first.waitForLog((l) => l.msg === "Validator client started", 60_000, "validator client start");
      expect(started).toMatchObject({validators: 4, interop: 0, keystores: 4});
      for (const i of ours) expect(existsSync(join(keys, interopPubkey(i), "voting-keystore.json.lock"))).toBe(true);

      const second = new NodeProcess(vcArgs("vc2"));
      procs.push(second);
      expect((await second.exited).code).toBe(1);
      const refusal = second.stderr.join("");
      expect(refusal).toContain(`in use by process ${first.proc.pid}`);
      expect(refusal).toContain(join(keys, interopPubkey(60), "voting-keystore.json"));

      // the keystores' keys have attester duties each epoch (minimal preset: 8 slots of 1 s)
      await first.waitForLog((l) => l.msg === "Published attestations", 40_000, "attestations signed with the keystores");

      // the same keys in other keystore files (no lock shared): only doppelganger protection can tell
      const copies = await writeLighthouseLayout(join(files.dir, "copies"), ours);
      const third = new NodeProcess(["validator", "--beacon-node", url, "--keystores", copies.keys, "--secrets", copies.secrets, "--data-dir", join(files.dir, "vc3"), "--doppelganger-protection"]);
      procs.push(third);
      expect((await third.waitForLog((l) => l.msg === "Validator client started", 60_000, "third client start")).doppelgangerWaiting).toBe(4);
      const exit = await Promise.race([third.exited, new Promise<null>((r) => setTimeout(() => r(null), 45_000))]);
      expect(exit?.code).toBe(1);
      expect(third.stderr.join("")).toMatch(/doppelganger protection: validator 6[0-3] was live in epoch \d+/);
      expect(third.logs.filter((l) => /^Published/.test(l.msg))).toEqual([]);
      // the keystores' keys signed without refusal (aggregates and sync contributions can fail at the
      // node under load, "No matching attestation found": a node-side matter, not the keystores')
      expect(first.logs.filter((l) => l.level >= 50 && (l.msg === "Attestation refused or failed" || l.msg === "Block proposal failed"))).toEqual([]);
      expect((await first.stop("SIGTERM")).code).toBe(0);
      for (const i of ours) expect(existsSync(join(keys, interopPubkey(i), "voting-keystore.json.lock"))).toBe(false);
    },
    150_000
  );
});
