import {mkdtemp, rm} from "node:fs/promises";
import {tmpdir} from "node:os";
import {join} from "node:path";
import type {ValidatorContext} from "../../../src/validator/context.ts";
import {DutyLoop, type DutyClock} from "../../../src/validator/dutyLoop.ts";
import {DEFAULT_GAS_LIMIT, ProposerSettings} from "../../../src/validator/keys/proposerSettings.ts";
import {ValidatorKeys} from "../../../src/validator/keys/validatorKeys.ts";
import {ValidatorSigner} from "../../../src/validator/signer.ts";
import {SlashingProtection} from "../../../src/validator/slashingProtection.ts";
import {ValidatorIndices} from "../../../src/validator/validators.ts";
import {interopPubkey} from "../../keystoreFiles.ts";
import {captureLog} from "./captureLog.ts";
import {type FakeBeaconApi, genesisValidatorsRoot, keys as interopKeys} from "./fakeBeaconApi.ts";

/** A duty loop driven by hand: its clock, the slot by slot run of its duties, and what it logged. */

/** The slot clock, moved by the test: a slot's start, then its deadlines in order. */
export class ManualClock implements DutyClock {
  slot: number;
  private onSlot: ((slot: number) => void) | null = null;
  private due: {slot: number; offsetMs: number; fn: () => void}[] = [];

  constructor(slot: number) {
    this.slot = slot;
  }
  currentSlot(): number {
    return this.slot;
  }
  start(onSlot: (slot: number) => void): void {
    this.onSlot = onSlot;
  }
  runAt(slot: number, offsetMs: number, fn: () => void): void {
    this.due.push({slot, offsetMs, fn});
  }
  startSlot(): void {
    this.onSlot!(++this.slot);
  }
  /** Runs the tasks due in the current slot (attestations, aggregates, sync messages and contributions). */
  runDue(): void {
    const now = this.due.filter((d) => d.slot <= this.slot).sort((a, b) => a.offsetMs - b.offsetMs);
    this.due = this.due.filter((d) => d.slot > this.slot);
    for (const d of now) d.fn();
  }
}

/** `n` turns of the event loop: whatever the answers at hand set going has run. */
export async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** Turns of the event loop until `probe` holds (the fake node answers at once; signatures take a few turns, slashing protection writes to disk). */
export async function until(what: string, probe: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`never happened: ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** The validator of an electra SingleAttestation. */
export const attesterOf = (a: unknown): number => (a as {attesterIndex: number}).attesterIndex;

/**
 * A duty loop over `api` with the interop keys `indices` (slashing protection and keys in a
 * temporary directory), its clock at `slot`, started and settled. `cleanups` gets what to undo.
 */
export async function startDutyLoop(api: FakeBeaconApi, slot: number, indices: number[], cleanups: (() => Promise<void>)[]) {
  const dir = await mkdtemp(join(tmpdir(), "duty-loop-"));
  const protection = await SlashingProtection.open(join(dir, "protection"));
  cleanups.push(async () => {
    await protection.close();
    await rm(dir, {recursive: true, force: true});
  });
  await protection.bindToChain(genesisValidatorsRoot);
  const {log, lines} = captureLog();
  const validators = new ValidatorIndices([]);
  const signer = new ValidatorSigner(api.config, [], protection);
  const ctx: ValidatorContext = {api, config: api.config, signer, validators, log};
  const settings = ProposerSettings.open(join(dir, "proposer-settings.json"), {gasLimit: DEFAULT_GAS_LIMIT});
  const keys = new ValidatorKeys({signer, validators, protection, settings, dataDir: dir, log});
  cleanups.push(async () => keys.releaseLocks());
  for (const i of indices) keys.add({pubkey: interopPubkey(i)}, interopKeys[i]);
  const clock = new ManualClock(slot);
  const loop = new DutyLoop(ctx, clock, settings);
  cleanups.push(async () => loop.stop());
  await loop.start();
  await loop.settle(5000);
  /** the next slot whole: its start, then its deadlines, everything settled */
  const runSlot = async (): Promise<void> => {
    clock.startSlot();
    await loop.settle(5000);
    clock.runDue();
    await loop.settle(5000);
  };
  return {clock, loop, keys, validators, runSlot, lines};
}
