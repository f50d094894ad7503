import {expect} from "@jest/globals";
import {PoolError} from "../../../src/pools/index.ts";

/** The submission fails with a PoolError whose reason matches. */
export async function expectRejected(p: Promise<unknown>, reason: RegExp): Promise<void> {
  const err = await p.then(
    () => null,
    (e: unknown) => e
  );
  expect(err).toBeInstanceOf(PoolError);
  expect((err as PoolError).reason).toMatch(reason);
}
