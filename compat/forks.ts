import {forkAll, type ForkName} from "@lodestar/params";
import {bodyText, readResponse, type Transport} from "../src/api/client.ts";
import {routes} from "../src/api/routes/index.ts";

/**
 * The fork of a slot, as the beacon node behind a transport schedules it (its
 * `/eth/v1/config/spec`: SLOTS_PER_EPOCH and each `<FORK>_FORK_EPOCH`), for routes whose
 * `Eth-Consensus-Version` header the legacy call did not carry. The schedule is read once per
 * transport; a failed read is tried again at the next call.
 */

interface Schedule {
  slotsPerEpoch: number;
  /** forks in order with their epochs; phase0 at 0 */
  forks: {name: ForkName; epoch: bigint}[];
}

const schedules = new WeakMap<Transport, Promise<Schedule>>();

async function readSchedule(transport: Transport): Promise<Schedule> {
  const route = routes.getSpec;
  const res = await transport(route, {params: {}, query: {}, headers: {accept: "application/json"}});
  const spec = (readResponse(route, {...res, body: bodyText(res.body)}) as {data: Record<string, string>}).data;
  const slotsPerEpoch = Number(spec.SLOTS_PER_EPOCH);
  if (!Number.isSafeInteger(slotsPerEpoch) || slotsPerEpoch <= 0) throw new Error(`the spec's SLOTS_PER_EPOCH is ${JSON.stringify(spec.SLOTS_PER_EPOCH)}`);
  const forks = forkAll.flatMap((name) => {
    const epoch = name === "phase0" ? "0" : spec[`${name.toUpperCase()}_FORK_EPOCH`];
    return epoch !== undefined && /^[0-9]+$/.test(epoch) ? [{name, epoch: BigInt(epoch)}] : [];
  });
  return {slotsPerEpoch, forks};
}

/** The fork name at `slot` (a decimal string or a non-negative integer). */
export async function forkAtSlot(transport: Transport, slot: unknown): Promise<ForkName> {
  let schedule = schedules.get(transport);
  if (!schedule) {
    schedule = readSchedule(transport);
    schedules.set(transport, schedule);
    schedule.catch(() => schedules.delete(transport));
  }
  const {slotsPerEpoch, forks} = await schedule;
  const epoch = BigInt(String(slot)) / BigInt(slotsPerEpoch);
  let fork = forks[0]!.name;
  for (const f of forks) if (f.epoch <= epoch) fork = f.name;
  return fork;
}
