// suite: alone (two nodes and a validator client on 2-second slots: a block and every attestation of each slot after the kill is asserted)
import {describe, expect, it} from "@jest/globals";
import type {ForkName} from "@lodestar/params";
import {ssz, type Attestation} from "@lodestar/types";
import {devnetProcesses, saveGenesisState} from "./devnetProcesses.ts";
import {getJson, p2pAddress, restNodeArgs, waitFor} from "./nodeProcess.ts";

/**
 * `beacon-gateway validator` over two nodes of one devnet (`--beacon-node A,B`): the first node is
 * killed in the middle of an epoch and no duty is missed. The chain itself is the witness: a
 * block at every slot from the kill on, and every validator's attestation of every slot in the
 * blocks that follow it; the validator client's own metrics count no missed duty and name B as
 * the node duties go to.
 */

const SECONDS_PER_SLOT = 2;
const SLOTS_PER_EPOCH = 8;
/** slots watched after the kill: into the next epoch */
const AFTER_KILL = 6;

/** Sum of a metric's samples whose labels include `labels`, from Prometheus text. */
function metricValue(text: string, name: string, labels: Record<string, string>): number {
  let sum = 0;
  for (const line of text.split("\n")) {
    const match = /^(\w+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const have = Object.fromEntries([...(match[2] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) sum += Number(match[3]);
  }
  return sum;
}

async function headSlot(url: string): Promise<number> {
  return Number((await getJson(url, "/eth/v1/beacon/headers/head")).body.data.header.message.slot);
}

/** The validators of each committee at `slot`, by committee index. */
async function committeesAt(url: string, slot: number): Promise<Map<number, number[]>> {
  const {body} = await getJson(url, `/eth/v1/beacon/states/${slot}/committees?slot=${slot}`);
  return new Map((body.data as {index: string; validators: string[]}[]).map((c) => [Number(c.index), c.validators.map(Number)]));
}

/**
 * The validators whose attestation of each slot is in the blocks of `fromSlot`..`toSlot`: before
 * electra, aggregation bits over the committee of `data.index`; from electra, over the committees
 * of the committee bits, one after the other.
 */
async function attestersInBlocks(url: string, fromSlot: number, toSlot: number): Promise<Map<number, Set<number>>> {
  const bySlot = new Map<number, Set<number>>();
  const committees = new Map<number, Map<number, number[]>>();
  for (let slot = fromSlot; slot <= toSlot; slot++) {
    const res = await fetch(`${url}/eth/v2/beacon/blocks/${slot}`, {headers: {accept: "application/octet-stream"}});
    if (res.status === 404) continue;
    const fork = res.headers.get("eth-consensus-version") as ForkName;
    const block = ssz[fork].SignedBeaconBlock.deserialize(new Uint8Array(await res.arrayBuffer()));
    for (const attestation of block.message.body.attestations as Attestation[]) {
      const at = attestation.data.slot;
      if (!committees.has(at)) committees.set(at, await committeesAt(url, at));
      const seen = bySlot.get(at) ?? new Set<number>();
      bySlot.set(at, seen);
      let offset = 0;
      const committeeBits = "committeeBits" in attestation ? attestation.committeeBits.getTrueBitIndexes() : [attestation.data.index];
      for (const committeeIndex of committeeBits) {
        const members = committees.get(at)!.get(committeeIndex)!;
        members.forEach((validator, i) => attestation.aggregationBits.get(offset + i) && seen.add(validator));
        offset += members.length;
      }
    }
  }
  return bySlot;
}

describe("validator client over two beacon nodes", () => {
  const {dirs, start} = devnetProcesses("failover", ["a", "b", "vc"]);

  it(
    "the first node killed mid-epoch: duties go on through the second, none missed",
    async () => {
      const genesisTime = Math.floor(Date.now() / 1000) + 12;
      // phase0 and 32 validators: the least signing work a slot (no sync committee), for a machine that runs many tests at once
      const chain = ["--seconds-per-slot", String(SECONDS_PER_SLOT), "--dev-validators", "none", "--genesis-fork", "phase0"];
      const a = start(restNodeArgs(dirs[0], [...chain, "--genesis-time", String(genesisTime), "--validators", "32"]));
      const urlA = await a.restUrl();
      const genesisFile = await saveGenesisState(urlA, dirs[0]);
      const b = start(restNodeArgs(dirs[1], [...chain, "--genesis-state", genesisFile, "--direct-peer", await p2pAddress(urlA)]));
      const urlB = await b.restUrl();
      const vc = start(["validator", "--beacon-node", `${urlA},${urlB}`, "--interop-indices", "0..31", "--data-dir", dirs[2], "--metrics", "--metrics-port", "0"]);
      const metricsUrl = `http://127.0.0.1:${(await vc.waitForLog((l) => l.msg === "metrics listening", 60_000, "validator metrics")).port}/metrics`;
      const metrics = async () => (await fetch(metricsUrl)).text();

      // both nodes synced in the validator client's view; then A, the first, killed in the middle of an epoch
      await waitFor("B peered and both nodes healthy for the validator client", 40_000, async () => {
        const peers = Number((await getJson(urlB, "/eth/v1/node/peer_count")).body.data.connected);
        const text = await metrics();
        const healthy = [urlA, urlB].every((node) => metricValue(text, "beacon_gateway_validator_beacon_node_healthy", {node}) === 1);
        return peers >= 1 && healthy ? true : null;
      });
      const published = await vc.waitForLog((l) => l.msg === "Published block" && (l.slot as number) % SLOTS_PER_EPOCH === 4, 30_000, "a block in the middle of an epoch");
      const killSlot = published.slot as number;
      const before = await metrics();
      expect(metricValue(before, "beacon_gateway_validator_beacon_node_primary", {node: urlA})).toBe(1);
      const missedBefore = metricValue(before, "beacon_gateway_validator_duties_total", {result: "missed"});
      const linesBefore = vc.logs.length;
      await a.stop("SIGKILL");

      const lastSlot = killSlot + AFTER_KILL;
      await waitFor(`B's head past slot ${lastSlot + 2}`, (AFTER_KILL + 10) * SECONDS_PER_SLOT * 1000, async () => ((await headSlot(urlB)) >= lastSlot + 2 ? true : null));

      // a block at every slot from the kill on, all proposed by the validator client through B
      for (let slot = killSlot; slot <= lastSlot; slot++) {
        expect({slot, status: (await getJson(urlB, `/eth/v1/beacon/headers/${slot}`)).status}).toEqual({slot, status: 200});
      }
      // every validator due at each slot attested, its attestation in the blocks that follow
      const attesters = await attestersInBlocks(urlB, killSlot - 1, lastSlot + 2);
      for (let slot = killSlot - 1; slot <= lastSlot; slot++) {
        const due = [...(await committeesAt(urlB, slot)).values()].flat().sort((x, y) => x - y);
        expect({slot, attesters: [...(attesters.get(slot) ?? [])].sort((x, y) => x - y)}).toEqual({slot, attesters: due});
      }

      const text = await metrics();
      expect(metricValue(text, "beacon_gateway_validator_duties_total", {result: "missed"})).toBe(missedBefore);
      expect(metricValue(text, "beacon_gateway_validator_beacon_node_primary", {node: urlB})).toBe(1);
      expect(metricValue(text, "beacon_gateway_validator_beacon_node_request_failures_total", {node: urlA})).toBeGreaterThan(0);
      // A's failures logged once, not once per request
      expect(vc.logs.slice(linesBefore).filter((l) => l.msg.startsWith("Beacon node not answering") && l.node === urlA)).toHaveLength(1);
      expect((await vc.stop("SIGTERM")).code).toBe(0);
    },
    150_000
  );
});
