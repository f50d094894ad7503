import {afterEach, describe, expect, it} from "@jest/globals";
import {readdirSync, readFileSync} from "node:fs";
import {mkdtemp, rm} from "node:fs/promises";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {fileURLToPath} from "node:url";
import {fromHex} from "@lodestar/utils";
import {parseInterchange} from "../../../src/validator/interchange.ts";
import {SlashingProtection, SlashingProtectionError} from "../../../src/validator/slashingProtection.ts";

/**
 * The EIP-3076 test cases of eth-clients/slashing-protection-interchange-tests (vendored in
 * interchange-cases/, see ORIGIN.md), run as their README says: a fresh database bound to the
 * case's genesis validators root; per step, import the interchange (it must fail exactly when
 * `should_succeed` is false), then attempt each block and attestation in order.
 *
 * Expected outcomes: the cases give one for a minimal database (`should_succeed`) and one
 * for a complete one (`should_succeed_complete`). Ours lies between: it keeps the highest
 * block with its root (so it re-signs that very block, as a complete database does), and
 * attestations complete above a watermark that an import raises to the file's highest
 * epochs. So each signing must succeed whenever a minimal database would sign it, and must be
 * refused whenever even a complete one refuses it (refusing is the only safe answer then).
 */

const CASES_DIR = fileURLToPath(new URL("./interchange-cases/", import.meta.url));

interface Attempt {
  pubkey: string;
  signing_root?: string;
  should_succeed: boolean;
  should_succeed_complete: boolean;
}
interface TestCase {
  name: string;
  genesis_validators_root: string;
  steps: Array<{
    should_succeed: boolean;
    contains_slashable_data: boolean;
    interchange: unknown;
    blocks: Array<Attempt & {slot: string}>;
    attestations: Array<Attempt & {source_epoch: string; target_epoch: string}>;
  }>;
}

const cases: TestCase[] = readdirSync(CASES_DIR)
  .filter((f) => f.endsWith(".json") && f !== "schema.json")
  .sort()
  .map((f) => JSON.parse(readFileSync(join(CASES_DIR, f), "utf8")) as TestCase);

const ZERO_ROOT = "0x" + "00".repeat(32);

/** Whether the signing was accepted; anything but a SlashingProtectionError fails the test. */
async function accepted(attempt: Promise<void>): Promise<boolean> {
  try {
    await attempt;
    return true;
  } catch (e) {
    if (e instanceof SlashingProtectionError) return false;
    throw e;
  }
}

/** Signed when a minimal database signs, refused when a complete one refuses. */
function expectBetween(label: Record<string, unknown>, ok: boolean, attempt: Attempt): void {
  if (attempt.should_succeed) expect({...label, ok}).toEqual({...label, ok: true});
  if (!attempt.should_succeed_complete) expect({...label, ok}).toEqual({...label, ok: false});
}

describe("EIP-3076 interchange test cases", () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await rm(dir, {recursive: true, force: true});
    dir = undefined;
  });

  it("vendors the whole generated suite", () => {
    expect(cases.length).toBe(38);
  });

  it.each(cases.map((c) => [c.name, c] as const))("%s", async (_name, testCase) => {
    dir = await mkdtemp(join(tmpdir(), "interchange-case-"));
    const protection = await SlashingProtection.open(dir);
    try {
      await protection.bindToChain(testCase.genesis_validators_root);
      for (const [i, step] of testCase.steps.entries()) {
        const imported = await (async () => {
          const interchange = parseInterchange(step.interchange);
          await protection.importHistory(interchange.genesisValidatorsRoot, interchange.data);
        })().then(
          () => true,
          () => false
        );
        expect({step: i, imported}).toEqual({step: i, imported: step.should_succeed});

        for (const [j, b] of step.blocks.entries()) {
          const ok = await accepted(protection.checkAndInsertBlockProposal(fromHex(b.pubkey), Number(b.slot), fromHex(b.signing_root ?? ZERO_ROOT)));
          expectBetween({step: i, block: j, slot: b.slot}, ok, b);
        }
        for (const [j, a] of step.attestations.entries()) {
          const vote = {sourceEpoch: Number(a.source_epoch), targetEpoch: Number(a.target_epoch), signingRoot: fromHex(a.signing_root ?? ZERO_ROOT)};
          const ok = await accepted(protection.checkAndInsertAttestation(fromHex(a.pubkey), vote));
          expectBetween({step: i, attestation: j, vote: `${a.source_epoch}->${a.target_epoch}`}, ok, a);
        }
      }
    } finally {
      await protection.close();
    }
  });
});
