import {describe, expect, it} from "@jest/globals";
import {readFileSync} from "node:fs";
import {LEGACY_CATALOGUE} from "../../compat/catalogue.ts";
import {METHODS_FILE, renderMethodsGuide} from "../../migration-guide/generate.ts";

/** The migration guide's method tables are the compat table's own: the committed file must be what the generator renders now. */

const INTRO_FILE = new URL("../../migration-guide/intro.md", import.meta.url);

describe("the migration guide", () => {
  it("has method tables generated from the compat method table (run: node migration-guide/generate.ts --write)", () => {
    const committed = readFileSync(METHODS_FILE, "utf8");
    const rendered = renderMethodsGuide();
    if (committed !== rendered) {
      const committedLines = committed.split("\n");
      const first = rendered.split("\n").findIndex((line, i) => line !== committedLines[i]);
      throw new Error(`migration-guide/methods.md is stale from line ${first + 1}: run node migration-guide/generate.ts --write`);
    }
  });

  it("gives every method of the catalogue its REST call and a curl pair", () => {
    const guide = renderMethodsGuide();
    expect(guide).not.toContain("not mapped yet");
    for (const {method} of LEGACY_CATALOGUE) {
      const section = guide.split(`\n### ${method}\n`)[1]?.split("\n### ")[0];
      expect({method, section: section !== undefined}).toEqual({method, section: true});
      expect(section).toMatch(/Replaced by `(GET|POST) \/(eth|ext)\//);
      expect(section).toContain(`"method":"${method}"`);
      expect(section).toMatch(/# REST\ncurl -s /);
    }
  });

  it("covers start-up and the operational rules in its introduction", () => {
    const intro = readFileSync(INTRO_FILE, "utf8");
    for (const phrase of ["`--rpc` | `--rest`", "`--rpc-port 9190` | `--rest-port 5052`", "public internet", "historical queries", "TLS-terminating reverse proxy", "methods.md"]) {
      expect(intro).toContain(phrase);
    }
  });
});
