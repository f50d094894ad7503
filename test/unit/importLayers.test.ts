import {describe, expect, it} from "@jest/globals";
import {fileURLToPath} from "node:url";
import {type ImportEdge, importGraph, importsOf, moduleOf, runtimeCycles} from "../importGraph.ts";

/**
 * The layers of docs/architecture.md ("what may import what"), read from the imports of every
 * file under src/: a lower layer never reaches a higher one. A failure names the file and the
 * import that breaks a rule.
 */

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** src/*.ts that compose the layers (a command's process): they may import anything of src/ */
const COMPOSITION = new Set(["node.ts", "devnet.ts", "mockBuilderProcess.ts"]);
/** the core: the chain and what it is made of (and the files of src/ they share: log.ts, …) */
const CORE = new Set(["clock", "chain", "forkchoice", "db", "pools", "duties", "execution", "config", "bls", "kzg", "metrics", "builder"]);
const isBase = (module: string): boolean => module.endsWith(".ts") && !COMPOSITION.has(module);

interface Rule {
  name: string;
  /** whether the rule governs this importing file's module */
  from: (module: string, file: string) => boolean;
  /** whether the imported file's module is forbidden to it */
  to: (module: string, path: string) => boolean;
}

const RULES: Rule[] = [
  {
    name: "the core never reaches api/, network/, sync/, cli/ or validator/",
    from: (m) => CORE.has(m) || isBase(m),
    to: (m) => ["api", "network", "sync", "cli", "validator"].includes(m),
  },
  {name: "network/ and sync/ never reach api/, cli/ or validator/", from: (m) => m === "network" || m === "sync", to: (m) => ["api", "cli", "validator"].includes(m)},
  {name: "execution/ never reaches chain/", from: (m) => m === "execution", to: (m) => m === "chain"},
  {
    name: "config/, clock/ and kzg/ are leaves: they reach only the shared files of src/ (log.ts, …)",
    from: (m) => m === "config" || m === "clock" || m === "kzg",
    to: (m, path) => path.startsWith("src/") && !isBase(m),
  },
  {name: "nothing in src/ reaches compat/", from: () => true, to: (m) => m === "compat"},
];

function violations(edges: ImportEdge[]): string[] {
  const found: string[] = [];
  for (const edge of edges) {
    const from = moduleOf(edge.from);
    const to = moduleOf(edge.to);
    if (from === to || !(edge.to.startsWith("src/") || edge.to.startsWith("compat/"))) continue;
    for (const rule of RULES) {
      if (rule.from(from, edge.from) && rule.to(to, edge.to)) found.push(`${edge.from} imports "${edge.specifier}": ${rule.name}`);
    }
  }
  return found;
}

describe("import layers", () => {
  const edges = importGraph(ROOT, "src");

  it("reads every kind of import from a file's text", () => {
    const text = [
      'import {a, type B} from "../chain/beaconChain.ts";',
      'import type {C} from "../sync/checkpointSync.ts";',
      'export {d} from "./d.ts";',
      'export type * from "../api/routes/index.ts";',
      'import "./sideEffect.ts";',
      "import * as e from '@lodestar/types';",
      'const {f} = await import("../../compat/server.ts");',
      '// import {g} from "../api/commented.ts";',
      '/* import {h} from "../api/blockComment.ts"; */',
      'const url = "http://x//y"; import {i} from "../db/keys.ts";',
    ].join("\n");
    expect(importsOf("src/network/x.ts", text).map((e) => [e.to, e.typeOnly])).toEqual([
      ["src/chain/beaconChain.ts", false],
      ["src/sync/checkpointSync.ts", true],
      ["src/network/d.ts", false],
      ["src/api/routes/index.ts", true],
      ["src/network/sideEffect.ts", false],
      ["@lodestar/types", false],
      ["src/db/keys.ts", false],
      ["compat/server.ts", false],
    ]);
  });

  it("finds the imports that break a rule, and passes the others", () => {
    const sample = (from: string, to: string): ImportEdge => ({from, to, specifier: to, typeOnly: true});
    expect(
      violations([
        sample("src/chain/init.ts", "src/sync/checkpointSync.ts"),
        sample("src/execution/mockEngine.ts", "src/chain/blobs/kzg.ts"),
        sample("src/network/index.ts", "src/api/impl/context.ts"),
        sample("src/config/networks.ts", "src/chain/genesis.ts"),
        sample("src/log.ts", "src/cli/values.ts"),
        sample("src/api/server/index.ts", "compat/server.ts"),
        sample("src/sync/rangeSync.ts", "src/network/status.ts"),
        sample("src/network/index.ts", "src/chain/interface.ts"),
        sample("src/api/impl/context.ts", "src/network/networkContext.ts"),
        sample("src/node.ts", "src/cli/options.ts"),
        sample("src/config/bootnodes.ts", "src/projectRoot.ts"),
      ])
    ).toEqual([
      'src/chain/init.ts imports "src/sync/checkpointSync.ts": the core never reaches api/, network/, sync/, cli/ or validator/',
      'src/execution/mockEngine.ts imports "src/chain/blobs/kzg.ts": execution/ never reaches chain/',
      'src/network/index.ts imports "src/api/impl/context.ts": network/ and sync/ never reach api/, cli/ or validator/',
      'src/config/networks.ts imports "src/chain/genesis.ts": config/, clock/ and kzg/ are leaves: they reach only the shared files of src/ (log.ts, …)',
      'src/log.ts imports "src/cli/values.ts": the core never reaches api/, network/, sync/, cli/ or validator/',
      'src/api/server/index.ts imports "compat/server.ts": nothing in src/ reaches compat/',
    ]);
  });

  it("src/ keeps the layers of docs/architecture.md", () => {
    expect(edges.length).toBeGreaterThan(1000);
    expect(violations(edges)).toEqual([]);
  });

  it("no file of src/ loads node:http with an ES import (src/nodeHttp.ts says why)", () => {
    const ofHttp = edges.filter((e) => e.to === "node:http" || e.to === "http");
    // the graph sees node:http where it is imported (as types)
    expect(ofHttp.some((e) => e.typeOnly)).toBe(true);
    expect(ofHttp.filter((e) => !e.typeOnly).map((e) => e.from)).toEqual([]);
  });

  it("no files of src/ load each other in a cycle", () => {
    expect(runtimeCycles([{from: "src/a.ts", to: "src/b.ts", specifier: "", typeOnly: false}, {from: "src/b.ts", to: "src/a.ts", specifier: "", typeOnly: false}])).toEqual([["src/a.ts", "src/b.ts"]]);
    expect(runtimeCycles(edges)).toEqual([]);
  });
});
