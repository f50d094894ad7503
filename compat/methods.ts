import {routes} from "../src/api/routes/index.ts";
import type {BodyDef, ParamDef, Route} from "../src/api/routes/types.ts";
import {LEGACY_CATALOGUE, type CatalogueEntry} from "./catalogue.ts";

/**
 * The JSON-RPC method table, derived from the route table: every route entry with a `legacy`
 * field is one method, its positional params the route arguments `legacy.params` names, in
 * order. Nothing here knows a route; a method missing from the table is a route entry missing
 * its `legacy` field (add it there).
 */

export type ArgDef = ParamDef<unknown> | BodyDef<unknown, unknown>;

export interface LegacyParam {
  /** the route argument this param fills; its name in errors and in the migration guide */
  name: string;
  def: ArgDef;
  /** the route cannot do without it (an optional trailing param may be left out or null) */
  required: boolean;
}

export interface LegacyMethod {
  name: string;
  route: Route;
  params: readonly LegacyParam[];
  /** the JSON key of the REST `data` that is the result (getSyncing's `is_syncing`); all of `data` when absent */
  result?: string;
  /** the method's entry in the spec's catalogue; absent for a name the spec does not list */
  catalogue?: CatalogueEntry;
}

/** Whether a route argument must be given: the codec's own answer to an absent value. */
function isRequired(def: ArgDef): boolean {
  if (def.in === "body") return !def.optional;
  try {
    def.codec.parse(undefined, def.name);
    return false;
  } catch {
    return true;
  }
}

/** The method table of a route table; throws on a legacy field the layer cannot serve. */
export function buildMethodTable(table: Record<string, Route>): Map<string, LegacyMethod> {
  const catalogue = new Map(LEGACY_CATALOGUE.map((entry) => [entry.method, entry]));
  const methods = new Map<string, LegacyMethod>();
  for (const route of Object.values(table)) {
    const legacy = route.legacy;
    if (!legacy) continue;
    const where = `route ${route.operationId} (legacy method ${legacy.method})`;
    const other = methods.get(legacy.method);
    if (other) throw new Error(`compat: ${legacy.method} is the legacy method of both ${other.route.operationId} and ${route.operationId}`);
    if (route.response.kind === "events") throw new Error(`compat: ${where} is an event stream, which JSON-RPC cannot answer`);
    const args = route.args as Record<string, ArgDef>;
    const names = legacy.params.map(String);
    const params = names.map((name) => {
      const def = args[name];
      if (!def) throw new Error(`compat: ${where} names ${name}, which is not an argument of the route`);
      return {name, def, required: isRequired(def)};
    });
    const unreachable = Object.keys(args).filter((name) => !names.includes(name) && isRequired(args[name]));
    if (unreachable.length > 0) throw new Error(`compat: ${where} leaves out the required argument(s) ${unreachable.join(", ")}`);
    methods.set(legacy.method, {name: legacy.method, route, params, result: legacy.result, catalogue: catalogue.get(legacy.method)});
  }
  return methods;
}

export const legacyMethods: ReadonlyMap<string, LegacyMethod> = buildMethodTable(routes as Record<string, Route>);

/** The spec's methods that no route entry maps yet. */
export function unmappedMethods(table: ReadonlyMap<string, LegacyMethod> = legacyMethods): string[] {
  return LEGACY_CATALOGUE.filter((entry) => !table.has(entry.method)).map((entry) => entry.method);
}

/** Methods of the table whose names the spec's catalogue does not list (a misspelt `legacy.method`). */
export function uncataloguedMethods(table: ReadonlyMap<string, LegacyMethod> = legacyMethods): string[] {
  return [...table.values()].filter((m) => !m.catalogue).map((m) => m.name);
}

/** How many params a call may pass: up to the last required one, and at most all of them. */
export function paramCount(method: LegacyMethod): {min: number; max: number} {
  let min = 0;
  method.params.forEach((p, i) => {
    if (p.required) min = i + 1;
  });
  return {min, max: method.params.length};
}
