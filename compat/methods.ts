import {routes} from "../src/api/routes/index.ts";
import type {BodyDef, ParamDef, Route} from "../src/api/routes/types.ts";
import {LEGACY_CATALOGUE, type CatalogueEntry} from "./catalogue.ts";
import type {Filler} from "./fillers.ts";
import type {ResultSelector} from "./results.ts";
import {LEGACY_TABLE, type LegacyEntry, type ParamSpec} from "./table.ts";

/**
 * The JSON-RPC method table, built from compat's own table (table.ts) over the route table:
 * each entry of LEGACY_TABLE is one method, its positional params the route arguments it
 * names, in order. A method missing here is an entry missing from LEGACY_TABLE (add it there).
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
  /** what of the REST answer is the result; all of it when absent */
  result?: ResultSelector;
  /** one item is sent as a list of one (the legacy method took one item where REST takes a list) */
  oneItemOfList: boolean;
  /** the slot, read from the JSON body, whose fork goes into the route's `fork` argument */
  forkOfBody?: (body: unknown) => unknown;
  /** error statuses of a status route that are the result, not a failure */
  statusResults: readonly number[];
  /** route arguments a call may leave out, by argument name, and how compat finds each then */
  fill: Readonly<Record<string, Filler>>;
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

/** The method table of a legacy table over a route table; throws on an entry the layer cannot serve. */
export function buildMethodTable(table: Record<string, Route>, legacyTable: Record<string, readonly LegacyEntry<any>[] | undefined> = LEGACY_TABLE): Map<string, LegacyMethod> {
  const catalogue = new Map(LEGACY_CATALOGUE.map((entry) => [entry.method, entry]));
  const methods = new Map<string, LegacyMethod>();
  for (const [operationId, entries] of Object.entries(legacyTable)) {
    const route = table[operationId];
    for (const entry of entries ?? []) {
      const where = `route ${operationId} (legacy method ${entry.method})`;
      if (!route) throw new Error(`compat: ${where} is not in the route table`);
      const other = methods.get(entry.method);
      if (other) throw new Error(`compat: ${entry.method} is the legacy method of both ${other.route.operationId} and ${operationId}`);
      if (route.response.kind === "events") throw new Error(`compat: ${where} is an event stream, which JSON-RPC cannot answer`);
      const args = route.args as Record<string, ArgDef>;
      const specs = entry.params.map((p: ParamSpec<any>) => (typeof p === "string" ? {arg: p, required: false} : p));
      const names = specs.map((p) => p.arg);
      const fill = {...entry.fill} as Record<string, Filler>;
      const params = specs.map(({arg, required}) => {
        const def = args[arg];
        if (!def) throw new Error(`compat: ${where} names ${arg}, which is not an argument of the route`);
        return {name: arg, def, required: required || (isRequired(def) && !(arg in fill))};
      });
      const stray = Object.keys(fill).filter((arg) => !names.includes(arg) || args[arg]!.in === "body");
      if (stray.length > 0) throw new Error(`compat: ${where} fills ${stray.join(", ")}, which must be params of the method and not its body`);
      const filled = entry.forkOfBody ? [...names, "fork"] : names;
      if (entry.statusResults && route.response.kind !== "status") throw new Error(`compat: ${where} takes statuses as results, but the route answers with a body`);
      if (entry.forkOfBody && !args.fork) throw new Error(`compat: ${where} sets the fork of a route without a fork argument`);
      const unreachable = Object.keys(args).filter((name) => !filled.includes(name) && isRequired(args[name]));
      if (unreachable.length > 0) throw new Error(`compat: ${where} leaves out the required argument(s) ${unreachable.join(", ")}`);
      methods.set(entry.method, {
        name: entry.method,
        route,
        params,
        result: entry.result,
        oneItemOfList: entry.oneItemOfList === true,
        forkOfBody: entry.forkOfBody,
        fill,
        statusResults: entry.statusResults ?? [],
        catalogue: catalogue.get(entry.method),
      });
    }
  }
  return methods;
}

export const legacyMethods: ReadonlyMap<string, LegacyMethod> = buildMethodTable(routes as Record<string, Route>);

/** The spec's methods that no route entry maps yet. */
export function unmappedMethods(table: ReadonlyMap<string, LegacyMethod> = legacyMethods): string[] {
  return LEGACY_CATALOGUE.filter((entry) => !table.has(entry.method)).map((entry) => entry.method);
}

/** Methods of the table whose names the catalogue does not list (a misspelt method name). */
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
