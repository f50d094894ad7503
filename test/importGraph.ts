import {readFileSync, readdirSync} from "node:fs";
import {dirname, join, normalize, relative} from "node:path";

/**
 * The imports of the project's TypeScript files, read from their text (no compiler): every
 * `import … from "x"`, `export … from "x"`, side-effect `import "x"` and `import("x")` with a
 * literal specifier. Relative specifiers are resolved to paths from the repository's root
 * (`src/chain/init.ts`); package names are kept as they are.
 */

export interface ImportEdge {
  /** the importing file, from the repository's root */
  from: string;
  /** the imported file (`src/…`, `compat/…`) or package name */
  to: string;
  /** the specifier as written */
  specifier: string;
  /** `import type` / `export type`: erased at run time, no load order */
  typeOnly: boolean;
}

const STATIC = /\b(import|export)\s+(type\s+)?(?:[\w*\s{},$]*?\s*from\s*)?["']([^"']+)["']/g;
const DYNAMIC = /\bimport\s*\(\s*["']([^"']+)["']\s*\)/g;

/**
 * The text without its comments: those that begin a line (doc comments, `//` lines). A comment
 * after code on its line is kept, so that a string holding `//` or `/*` (a URL, a glob) is too.
 */
function stripComments(text: string): string {
  return text.replace(/^\s*\/\*[\s\S]*?\*\//gm, "").replace(/^\s*\/\/.*$/gm, "");
}

/** The imports written in one file's text. */
export function importsOf(file: string, text: string): ImportEdge[] {
  const code = stripComments(text);
  const resolve = (specifier: string): string => (specifier.startsWith(".") ? normalize(join(dirname(file), specifier)).split("\\").join("/") : specifier);
  const edges: ImportEdge[] = [];
  for (const m of code.matchAll(STATIC)) edges.push({from: file, to: resolve(m[3]), specifier: m[3], typeOnly: m[2] !== undefined});
  for (const m of code.matchAll(DYNAMIC)) edges.push({from: file, to: resolve(m[1]), specifier: m[1], typeOnly: false});
  return edges;
}

/** Every .ts file under `dir` (relative to `root`), sorted. */
export function sourceFiles(root: string, dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const entry of readdirSync(join(root, d), {withFileTypes: true})) {
      const path = `${d}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".ts")) out.push(path);
    }
  };
  walk(dir);
  return out.sort();
}

export function importGraph(root: string, dir: string): ImportEdge[] {
  return sourceFiles(root, dir).flatMap((file) => importsOf(file, readFileSync(join(root, file), "utf8")));
}

/**
 * The cycles of files that load each other at run time (type-only imports left out): each
 * strongly connected component of more than one file (Tarjan), its files sorted.
 */
export function runtimeCycles(edges: ImportEdge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const e of edges) {
    if (e.typeOnly || !e.to.startsWith("src/")) continue;
    (next.get(e.from) ?? next.set(e.from, []).get(e.from)!).push(e.to);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let counter = 0;
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) cycles.push(component.sort());
    }
  };
  for (const v of next.keys()) if (!index.has(v)) visit(v);
  return cycles;
}

/** `src/chain/init.ts` → `chain`; a file directly in src/ → its own name (`log.ts`); outside src/ → its first folder. */
export function moduleOf(path: string): string {
  const parts = path.split("/");
  if (parts[0] !== "src") return parts[0];
  return parts[1];
}

export function relativeTo(root: string, path: string): string {
  return relative(root, path).split("\\").join("/");
}
