import {readFileSync, writeFileSync} from "node:fs";
import {fileURLToPath, pathToFileURL} from "node:url";
import {integersToStrings} from "../compat/adapters.ts";
import {LEGACY_CATALOGUE, type CatalogueEntry} from "../compat/catalogue.ts";
import {legacyMethods, type LegacyMethod, type LegacyParam} from "../compat/methods.ts";

/**
 * Renders the per-method pages of the migration guide (methods.md) from the compat method
 * table, so the guide says exactly what `compat` does. `node migration-guide/generate.ts
 * --write` rewrites methods.md; test/compat/migrationGuide.test.ts fails when it is stale.
 */

export const METHODS_FILE = fileURLToPath(new URL("./methods.md", import.meta.url));

/** Example values of REST path, query and header parameters, by wire name; integers are JSON numbers in the legacy call. */
const PARAM_EXAMPLES: Record<string, unknown> = {
  state_id: "head",
  block_id: "head",
  validator_id: 0,
  id: [0, 1],
  status: ["active_ongoing"],
  peer_id: "PEER_ID",
  epoch: 1,
  slot: 8,
  committee_index: 0,
  randao_reveal: "RANDAO_REVEAL",
  graffiti: "hello",
  attestation_data_root: "ATTESTATION_DATA_ROOT",
};

/** Example text bodies, by their form field. */
const TEXT_EXAMPLES: Record<string, string> = {graffiti: "hello", log_level: "DEBUG; TRACE:chain; REQUIRED:none; DISABLED:api"};
/** Example JSON bodies, by param name, where a placeholder word would say less. */
const BODY_EXAMPLES: Record<string, unknown> = {validators: ["PUBKEY_1", "PUBKEY_2"]};

/** A JSON value written as a bare word (`ATTESTATION`): a JSON value the reader supplies. */
const PLACEHOLDER = "\u0000";
const placeholder = (word: string): string => PLACEHOLDER + word;
const json = (value: unknown): string => JSON.stringify(value).replace(/"\\u0000([A-Z0-9_]+)"/g, "$1");
const upperSnake = (name: string): string => name.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toUpperCase();

function example(method: LegacyMethod, param: LegacyParam): unknown {
  const def = param.def;
  if (def.in !== "body") return PARAM_EXAMPLES[def.name];
  if (def.text) return TEXT_EXAMPLES[def.text.formField] ?? placeholder(upperSnake(param.name));
  if (param.name in BODY_EXAMPLES) return BODY_EXAMPLES[param.name];
  const word = upperSnake(param.name);
  return placeholder(method.oneItemOfList ? word.replace(/S$/, "") : word);
}

/** The params of the example call: every param up to the last one that has an example (optional ones after it left out). */
function exampleParams(method: LegacyMethod): unknown[] {
  const values = method.params.map((p) => example(method, p));
  let end = values.length;
  while (end > 0 && values[end - 1] === undefined && !method.params[end - 1].required) end--;
  return values.slice(0, end).map((v, i) => v ?? placeholder(upperSnake(method.params[i].name)));
}

const shellQuote = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`;
/** A path segment or query value as a URL carries it (a list's commas kept readable). */
const urlText = (value: unknown): string => encodeURIComponent(restText(value)).replace(/%2C/g, ",");
const restText = (value: unknown): string => (Array.isArray(value) ? value.map(String).join(",") : String(value).replace(PLACEHOLDER, ""));

function curlPair(method: LegacyMethod): string {
  const params = exampleParams(method);
  const call = json({jsonrpc: "2.0", id: 1, method: method.name, params});
  const legacy = `curl -s -X POST -H 'Content-Type: application/json' \\\n  -d ${shellQuote(call)} "$RPC"`;
  const {route} = method;
  let path = route.path;
  const query: string[] = [];
  const headers: string[] = [];
  let body = "";
  method.params.forEach((param, i) => {
    const value = params[i];
    if (value === undefined) return;
    const def = param.def;
    if (def.in === "body") {
      const sent = method.oneItemOfList && !Array.isArray(value) ? [value] : value;
      body = def.text
        ? `-H 'Content-Type: text/plain' --data-binary ${shellQuote(String(value))}`
        : `-H 'Content-Type: application/json' -d ${shellQuote(json(integersToStrings(sent)))}`;
    } else if (def.in === "path") path = path.replace(`{${def.name}}`, urlText(value));
    else if (def.in === "query") query.push(`${def.name}=${urlText(value)}`);
    else headers.push(`-H '${def.name}: ${restText(value)}'`);
  });
  if (method.forkOfBody) headers.push("-H 'Eth-Consensus-Version: FORK'");
  const url = `"$REST${path}${query.length > 0 ? `?${query.join("&")}` : ""}"`;
  const status = route.response.kind === "status" ? "-o /dev/null -w '%{http_code}\\n'" : "";
  const parts = ["curl -s", status, route.method === "POST" ? "-X POST" : "", ...headers, body, url].filter((p) => p !== "");
  const jq = method.result?.jq ? ` | jq '${method.result.jq}'` : "";
  return ["```sh", "# JSON-RPC", legacy, "# REST", parts.join(" ") + jq, "```"].join("\n");
}

function whereParamGoes(method: LegacyMethod, param: LegacyParam): string {
  const filler = method.fill[param.name];
  return filler ? `${wireParamPlace(method, param)}; when left out, compat sends ${filler.describe}` : wireParamPlace(method, param);
}

function wireParamPlace(method: LegacyMethod, param: LegacyParam): string {
  const def = param.def;
  if (def.in === "body") {
    if (def.text) return "the body, as text (`Content-Type: text/plain`)";
    const fork = method.forkOfBody ? "; compat sets header `Eth-Consensus-Version` to the fork of the body's slot" : "";
    if (method.oneItemOfList) return `the JSON body, as a list: one item \`X\` becomes \`[X]\` (an array is sent as it is)${fork}`;
    return `the JSON body${fork}`;
  }
  if (def.in === "path") return `path \`{${def.name}}\``;
  if (def.in === "query") return `query \`${def.name}\`${Array.isArray(PARAM_EXAMPLES[def.name]) ? " (a list: repeat it or separate by commas)" : ""}`;
  return `header \`${def.name}\``;
}

/** Where the result is in the REST answer, in a few words: "`data`", "`data.peer_id`", "the HTTP status". */
function resultPlace(method: LegacyMethod): string {
  const response = method.route.response;
  if (response.kind === "empty") return "no body (compat: `true`)";
  const base = response.kind === "status" ? "STATUS" : response.kind === "data" && response.unwrapped ? "body" : "data";
  if (method.result) return method.result.describe(base);
  return response.kind === "status" ? "the HTTP status" : `\`${base}\``;
}

function resultText(method: LegacyMethod): string {
  const response = method.route.response;
  if (response.kind === "empty") return "REST answers HTTP 200 with no body; compat answers `true`.";
  if (response.kind === "status") {
    const given = method.result ? `as ${method.result.describe("STATUS")}, where STATUS is that code` : "as the result";
    const also = method.statusResults.length > 0 ? ` HTTP ${method.statusResults.join(", ")} is an answer too, not an error.` : "";
    return `REST answers with no body: the HTTP status code is the answer (compat gives it ${given}).${also}`;
  }
  if (response.kind !== "data") return "";
  const base = response.unwrapped ? "body" : "data";
  const where = method.result ? `${method.result.describe(base)} of the REST answer` : response.unwrapped ? "the whole body" : "the body's `data`";
  const meta = Object.values(response.meta as Record<string, {json: string}>).map((f) => `\`${f.json}\``);
  const beside = meta.length > 0 ? ` REST also gives ${meta.join(", ")} beside \`data\`.` : "";
  return `The result is ${where} (REST writes integers as decimal strings where JSON-RPC wrote numbers).${beside}`;
}

function summaryRow(entry: CatalogueEntry): string {
  const method = legacyMethods.get(entry.method);
  if (!method) return `| \`${entry.method}\` | | _not mapped yet_ | |`;
  const params = `\`[${method.params.map((p) => p.name).join(", ")}]\``;
  return `| [\`${entry.method}\`](#${entry.method.toLowerCase()}) | ${params} | \`${method.route.method} ${method.route.path}\` | ${resultPlace(method)} |`;
}

function methodSection(entry: CatalogueEntry): string {
  const method = legacyMethods.get(entry.method);
  const lines = [`### ${entry.method}`, ""];
  if (!method) return [...lines, "Not mapped yet: compat's table (compat/table.ts) has no entry for this method.", ""].join("\n");
  const {route} = method;
  lines.push(`Replaced by \`${route.method} ${route.path}\` (${route.operationId}).`, "");
  if (entry.outsideSpec) lines.push("The product spec's list omits this method; the removed server had it, and compat serves it.", "");
  if (entry.unshaped) lines.push("The spec lists this method without a parameter shape: compat takes the parameters of its REST endpoint, in this order.", "");
  if (method.params.length === 0) lines.push("No params.");
  else {
    lines.push("| param | | in REST |", "|---|---|---|");
    method.params.forEach((p, i) => lines.push(`| ${i + 1}. \`${p.name}\` | ${p.required ? "required" : "optional"} | ${whereParamGoes(method, p)} |`));
  }
  lines.push("", resultText(method), "", curlPair(method), "");
  return lines.join("\n");
}

export function renderMethodsGuide(): string {
  const standard = LEGACY_CATALOGUE.filter((e) => !e.extension);
  const extension = LEGACY_CATALOGUE.filter((e) => e.extension);
  return [
    "# JSON-RPC methods and their REST replacements",
    "",
    "<!-- Generated by `node migration-guide/generate.ts --write` from the compat method table. Do not edit by hand. -->",
    "",
    "Read [intro.md](intro.md) first: transport, errors, the number encoding, start-up. In the curl",
    "pairs `$RPC` is the JSON-RPC address (`http://127.0.0.1:9190`) and `$REST` the REST one",
    "(`http://127.0.0.1:5052`). A word in capitals (`ATTESTATION`, `RANDAO_REVEAL`) stands for a value you supply.",
    "",
    "| JSON-RPC method | params | REST | result |",
    "|---|---|---|---|",
    ...LEGACY_CATALOGUE.map(summaryRow),
    "",
    "## Standard methods",
    "",
    ...standard.map(methodSection),
    "## Extension methods",
    "",
    "Where one of these repeats a standard answer, it is read from the standard call (a field of it). The",
    "others have no standard REST call: beacon-gateway serves each under `/ext/v1/`. Other beacon nodes lack",
    "these endpoints, so `beacon-gateway compat` in front of them answers those methods with an error.",
    "",
    ...extension.map(methodSection),
  ].join("\n");
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const text = renderMethodsGuide();
  if (process.argv.includes("--write")) writeFileSync(METHODS_FILE, text);
  else if (process.argv.includes("--check")) {
    const same = readFileSync(METHODS_FILE, "utf8") === text;
    if (!same) process.stderr.write("migration-guide/methods.md is stale: run node migration-guide/generate.ts --write\n");
    process.exitCode = same ? 0 : 1;
  } else process.stdout.write(text);
}
