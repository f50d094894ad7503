import type {BeaconConfig} from "@lodestar/config";
import type {TopicLogger} from "../log.ts";
import type {ValidatorBeaconApi} from "./beaconApi.ts";
import type {ValidatorSigner} from "./signer.ts";
import type {ValidatorIndices} from "./validators.ts";
import type {DutyMetrics, ValidatorDuty} from "../metrics/nodeMetrics.ts";

/** What every duty service works with. */
export interface ValidatorContext {
  api: ValidatorBeaconApi;
  config: BeaconConfig;
  signer: ValidatorSigner;
  validators: ValidatorIndices;
  log: TopicLogger;
  /** with --metrics: duties performed and missed */
  duties?: DutyMetrics;
}

/**
 * Publishes what was signed for `due` duties (`ready` of them signed) and counts them: the
 * signed ones performed once published, the rest missed (all of them if publishing fails).
 */
export async function publishDuties(ctx: ValidatorContext, duty: ValidatorDuty, due: number, ready: number, publish: () => Promise<void>): Promise<void> {
  if (ready > 0) {
    try {
      await publish();
    } catch (err) {
      ctx.duties?.missed(duty, due);
      throw err;
    }
  }
  if (ready > 0) ctx.duties?.performed(duty, ready);
  if (due > ready) ctx.duties?.missed(duty, due - ready);
}

/**
 * `sign()`'s result for a duty of `duty`'s key, or null if it failed because the key was deleted
 * meanwhile (the signer refuses a removed key, even for a signature already waiting for its
 * turn): the duties of the other keys go on. Any other failure is thrown.
 */
export async function signedIfStillOurs<T>(ctx: ValidatorContext, duty: {pubkey: Uint8Array; validatorIndex: number}, sign: () => Promise<T>): Promise<T | null> {
  try {
    return await sign();
  } catch (err) {
    if (!ctx.validators.owns(duty.pubkey, duty.validatorIndex)) return null;
    throw err;
  }
}

/** An error's message for a log line (stack traces stay out of the duty logs). */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Runs `task` on every item concurrently; a failing item is logged and does not stop the others. */
export async function forEachSettled<T>(
  items: T[],
  task: (item: T) => Promise<void>,
  onError: (item: T, err: unknown) => void
): Promise<void> {
  await Promise.all(
    items.map(async (item) => {
      try {
        await task(item);
      } catch (err) {
        onError(item, err);
      }
    })
  );
}
