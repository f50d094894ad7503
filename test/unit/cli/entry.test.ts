import {describe, expect, it} from "@jest/globals";
import {mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync} from "node:fs";
import {tmpdir} from "node:os";
import {join} from "node:path";
// the launcher's own module (plain JavaScript: it runs before any TypeScript loads)
import {buildIsCurrent, entryUrl} from "../../../bin/entry.js";

/** The launcher runs the build in dist/ only when no source is newer than it. */
describe("the launcher's choice of code", () => {
  function project(): {root: string; touch: (path: string, seconds: number) => void} {
    const root = mkdtempSync(join(tmpdir(), "bg-entry-"));
    const touch = (path: string, seconds: number): void => {
      const full = join(root, path);
      mkdirSync(join(full, ".."), {recursive: true});
      writeFileSync(full, "");
      utimesSync(full, seconds, seconds);
    };
    touch("src/cli/main.ts", 1000);
    touch("src/chain/deep/file.ts", 1000);
    touch("compat/server.ts", 1000);
    return {root, touch};
  }

  it("runs the sources when there is no build", () => {
    const {root} = project();
    expect(buildIsCurrent(root, {})).toBe(false);
    rmSync(root, {recursive: true});
  });

  it("runs the build when it is as new as every source, and not when one source is newer or when asked not to", () => {
    const {root, touch} = project();
    touch("dist/src/cli/main.js", 2000);
    expect(buildIsCurrent(root, {})).toBe(true);
    expect(buildIsCurrent(root, {BEACON_GATEWAY_FROM_SOURCE: "1"})).toBe(false);
    touch("src/chain/deep/file.ts", 3000);
    expect(buildIsCurrent(root, {})).toBe(false);
    touch("dist/src/cli/main.js", 4000);
    touch("compat/server.ts", 5000);
    expect(buildIsCurrent(root, {})).toBe(false);
    rmSync(root, {recursive: true});
  });

  it("imports src/x.ts from the sources, or dist/src/x.js from the build", () => {
    expect(entryUrl("/p", "src/cli/main.ts", false)).toBe("file:///p/src/cli/main.ts");
    expect(entryUrl("/p", "src/cli/main.ts", true)).toBe("file:///p/dist/src/cli/main.js");
  });
});
