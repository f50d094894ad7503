import {mkdtemp, rm} from "node:fs/promises";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {type ClockCheck, DutyLoop, type DutyClock} from "../../../src/validator/dutyLoop.ts";
import type {ValidatorContext} from "../../../src/validator/context.ts";
import {DEFAULT_GAS_LIMIT, ProposerSettings} from "../../../src/validator/keys/proposerSettings.ts";
import {ValidatorKeys} from "../../../src/validator/keys/validatorKeys.ts";
import {ValidatorSigner} from "../../../src/validator/signer.ts";
import {SlashingProtection} from "../../../src/validator/slashingProtection.ts";
import {ValidatorIndices} from "../../../src/validator/validators.ts";
import {interopPubkey} from "../../keystoreFiles.ts";
import {captureLog} from "./captureLog.ts";
import {type FakeBeaconApi, genesisValidatorsRoot, keys as interopKeys} from "./fakeBeaconApi.ts";

/**
 * The slot clock, moved by the test: a slot's start, then its deadlines in order. Nothing runs
 * on the wall clock, so a test of the duty loop takes the time its work takes, whatever the load.
 */
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
  /** What is scheduled and not run yet: slot and offset into it, in the order asked. */
  scheduled(): {slot: number; offsetMs: number}[] {
    return this.due.map(({slot, offsetMs}) => ({slot, offsetMs}));
  }
  /**
   * Runs the tasks due in the current slot deadline by deadline (attestations, selection proofs,
   * aggregates, sync messages and contributions), each deadline's after the earlier ones' have
   * settled, as their hundreds of milliseconds apart let them.
   */
  async runDueInOrder(settle: () => Promise<void>): Promise<void> {
    for (;;) {
      const now = this.due.filter((d) => d.slot <= this.slot);
      if (now.length === 0) return;
      const first = Math.min(...now.map((d) => d.offsetMs));
      const batch = now.filter((d) => d.offsetMs === first);
      this.due = this.due.filter((d) => !batch.includes(d));
      for (const d of batch) d.fn();
      await settle();
    }
  }
  /** Runs the tasks due in the current slot at once (attestations, aggregates, sync messages and contributions). */
  runDue(): void {
    const now = this.due.filter((d) => d.slot <= this.slot).sort((a, b) => a.offsetMs - b.offsetMs);
    this.due = this.due.filter((d) => d.slot > this.slot);
    for (const d of now) d.fn();
  }
}

/** The validator of an electra SingleAttestation the fake node received. */
export const attesterOf = (a: unknown): number => (a as {attesterIndex: number}).attesterIndex;

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

/** A temporary directory for a test's slashing protection and keys, removed by the returned function. */
export async function tempDir(prefix: string): Promise<{dir: string; remove(): Promise<void>}> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return {dir, remove: () => rm(dir, {recursive: true, force: true})};
}

export interface ManualDuties {
  clock: ManualClock;
  loop: DutyLoop;
  keys: ValidatorKeys;
  validators: ValidatorIndices;
  /** what the loop's duty services work with (for a test that drives one of them itself) */
  ctx: ValidatorContext;
  lines: ReturnType<typeof captureLog>["lines"];
  /** The next slot whole: its start, then its deadlines, everything settled. */
  runSlot(): Promise<void>;
  /** Lets the duties in flight settle, closes the slashing protection and releases the keys (once: later calls do nothing). */
  stop(): Promise<void>;
}

/**
 * A duty loop over `api` with interop keys `indices`, its slashing protection in `dir` (opened
 * again by a later loop on the same `dir`: a restart), on a clock at `slot` that the test drives.
 */
export async function startManualDuties(opts: {api: FakeBeaconApi; dir: string; slot: number; indices: number[]; clockCheck?: ClockCheck}): Promise<ManualDuties> {
  const {api, dir} = opts;
  const protection = await SlashingProtection.open(join(dir, "protection"));
  await protection.bindToChain(genesisValidatorsRoot);
  const {log, lines} = captureLog();
  const validators = new ValidatorIndices([]);
  const signer = new ValidatorSigner(api.config, [], protection);
  const ctx: ValidatorContext = {api, config: api.config, signer, validators, log};
  const settings = ProposerSettings.open(join(dir, "proposer-settings.json"), {gasLimit: DEFAULT_GAS_LIMIT});
  const keys = new ValidatorKeys({signer, validators, protection, settings, dataDir: dir, log});
  for (const i of opts.indices) keys.add({pubkey: interopPubkey(i)}, interopKeys[i]);
  const clock = new ManualClock(opts.slot);
  const loop = new DutyLoop(ctx, clock, settings, undefined, undefined, opts.clockCheck);
  await loop.start();
  await loop.settle(5000);
  let stopped = false;
  return {
    clock,
    loop,
    keys,
    validators,
    ctx,
    lines,
    async runSlot() {
      clock.startSlot();
      await loop.settle(5000);
      await clock.runDueInOrder(() => loop.settle(5000));
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      loop.stop();
      await loop.settle(5000);
      keys.releaseLocks();
      await protection.close();
    },
  };
}
