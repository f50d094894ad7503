import {parseArgs} from "node:util";

/**
 * A command's options as one declarative table, from which come the parseArgs spec, the
 * parsing into the command's typed options object, the `--help` text and the option tables
 * of docs/cli.md. Each entry names its option, shows its default and parses its own field;
 * an entry reads other fields through the context (parsed on demand, so order is free).
 */

/** Thrown for a bad command line; the launcher prints the message on one line and exits 2. */
export class UsageError extends Error {}

/** A bad value, thrown by a field's parser without the option's name: the table adds `--name: `. */
export class InvalidValue extends Error {}

/** What a field's parser sees of the other options. */
export interface OptionContext<O> {
  /** the typed value of another field (parsed now if it was not yet) */
  get<K extends keyof O>(field: K): O[K];
  /** whether the user gave that field's option */
  given(field: keyof O): boolean;
}

interface Described {
  /** the option without its dashes: `rest-port` */
  name: string;
  /** heading the option is listed under in the help and docs/cli.md */
  group?: string;
  /** what it does; `code` spans stay code in docs/cli.md and lose their backticks in the help */
  help: string;
}

export interface FlagOption<O, T> extends Described {
  kind: "flag";
  parse(set: boolean, ctx: OptionContext<O>): T;
}

export interface ValueOption<O, T> extends Described {
  kind: "value";
  /** the value's placeholder: `PORT` */
  value: string;
  /** the text used when the option is absent, parsed like a given one and shown as the default */
  default?: string;
  /** shown as the default when the parser computes it (`code` spans allowed) */
  defaultText?: string;
  required?: boolean;
  /** repeatable: the parser gets every occurrence */
  multiple?: boolean;
  parse(text: string | string[] | undefined, ctx: OptionContext<O>): T;
}

export type OptionDef<O, T> = FlagOption<O, T> | ValueOption<O, T>;

/** One entry per field of the options object, in the order the help lists them. */
export type OptionTable<O> = {[K in keyof O]-?: OptionDef<O, O[K]>};

export interface CommandSpec<O> {
  /** `beacon-gateway node [options]` */
  usage: string;
  /** the help's paragraph under the usage line */
  about: string;
  options: OptionTable<O>;
}

type FlagInit<O, T> = Described & {parse?: (set: boolean, ctx: OptionContext<O>) => T};

/** A flag: false unless given (or what its parser makes of that). */
export function flag<O, T>(def: Described & {parse: (set: boolean, ctx: OptionContext<O>) => T}): FlagOption<O, T>;
export function flag<O>(def: Described): FlagOption<O, boolean>;
export function flag<O, T>(def: FlagInit<O, T>): FlagOption<O, T> {
  return {...def, kind: "flag", parse: def.parse ?? ((set: boolean) => set as T)};
}

type ValueInit = Described & {value: string; defaultText?: string};

/** An option with a value: parsed from the given text, or from `default` when absent. */
export function option<O, T>(def: ValueInit & {default: string; parse: (text: string, ctx: OptionContext<O>) => T}): ValueOption<O, T>;
export function option<O, T>(def: ValueInit & {required: true; parse: (text: string, ctx: OptionContext<O>) => T}): ValueOption<O, T>;
export function option<O, T>(def: ValueInit & {parse: (text: string | undefined, ctx: OptionContext<O>) => T}): ValueOption<O, T>;
export function option<O, T>(def: ValueInit & {default?: string; required?: boolean; parse: (text: never, ctx: OptionContext<O>) => T}): ValueOption<O, T> {
  return {...def, kind: "value"} as ValueOption<O, T>;
}

/** A repeatable option: the parser gets every occurrence, in order ([] when absent). */
export function repeatable<O, T>(def: ValueInit & {required?: true; parse: (texts: string[], ctx: OptionContext<O>) => T}): ValueOption<O, T> {
  return {...def, kind: "value", multiple: true} as ValueOption<O, T>;
}

/** Every command takes --help; it is not a field of the options object. */
const HELP: FlagOption<unknown, boolean> = flag({name: "help", help: "list the options"});

type Raw = Record<string, string | boolean | string[] | undefined>;

function entries<O>(spec: CommandSpec<O>): Array<[keyof O, OptionDef<O, unknown>]> {
  return Object.entries(spec.options) as Array<[keyof O, OptionDef<O, unknown>]>;
}

/** The parseArgs spec of a command's options. */
export function parseArgsSpec<O>(spec: CommandSpec<O>): Record<string, {type: "string" | "boolean"; multiple?: boolean}> {
  const out: Record<string, {type: "string" | "boolean"; multiple?: boolean}> = {};
  for (const [, def] of entries(spec)) {
    out[def.name] = def.kind === "flag" ? {type: "boolean"} : def.multiple ? {type: "string", multiple: true} : {type: "string"};
  }
  out[HELP.name] = {type: "boolean"};
  return out;
}

/** Parses a command line into the command's options object, or "help"; throws UsageError naming the option. */
export function parseCommand<O>(spec: CommandSpec<O>, args: string[]): O | "help" {
  let raw: Raw;
  try {
    raw = parseArgs({args, options: parseArgsSpec(spec), strict: true, allowPositionals: false}).values as Raw;
  } catch (e) {
    throw new UsageError((e as Error).message.split("\n")[0]);
  }
  if (raw[HELP.name]) return "help";

  const defs = spec.options as Record<keyof O, OptionDef<O, unknown>>;
  const parsed = new Map<keyof O, unknown>();
  const parsing = new Set<keyof O>();
  const ctx: OptionContext<O> = {
    get<K extends keyof O>(field: K): O[K] {
      if (parsed.has(field)) return parsed.get(field) as O[K];
      if (parsing.has(field)) throw new Error(`option table: ${String(field)} depends on itself`);
      parsing.add(field);
      const value = parseField(defs[field], raw[defs[field].name], ctx);
      parsed.set(field, value);
      return value as O[K];
    },
    given: (field) => raw[defs[field].name] !== undefined,
  };
  const out = {} as O;
  for (const [field] of entries(spec)) out[field] = ctx.get(field);
  return out;
}

function parseField<O>(def: OptionDef<O, unknown>, raw: string | boolean | string[] | undefined, ctx: OptionContext<O>): unknown {
  try {
    if (def.kind === "flag") return def.parse(raw === true, ctx);
    if (raw === undefined && def.required) throw new UsageError(`--${def.name} ${def.value} is required`);
    return def.parse(def.multiple ? (raw as string[] | undefined) ?? [] : (raw as string | undefined) ?? def.default, ctx);
  } catch (e) {
    if (e instanceof InvalidValue) throw new UsageError(`--${def.name}: ${e.message}`);
    throw e;
  }
}

// ---- rendering: the --help text and the markdown tables of docs/cli.md ----

const HELP_WIDTH = 100;
const plain = (text: string): string => text.replace(/`/g, "");

function optionLabel(def: OptionDef<unknown, unknown>): string {
  return def.kind === "flag" ? `--${def.name}` : `--${def.name} ${def.value}`;
}

/** The default as the help shows it, or null when there is none to show. */
function helpDefault(def: OptionDef<unknown, unknown>): string | null {
  if (def.kind === "flag") return null;
  if (def.required) return "required";
  if (def.default !== undefined) return `default ${def.default}`;
  if (def.defaultText !== undefined) return `default: ${plain(def.defaultText)}`;
  return null;
}

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}

/** Groups of options in the order they first appear; options without a group last, then --help. */
function grouped<O>(spec: CommandSpec<O>): Array<{group: string | undefined; defs: OptionDef<O, unknown>[]}> {
  const groups: Array<{group: string | undefined; defs: OptionDef<O, unknown>[]}> = [];
  for (const [, def] of entries(spec)) {
    let entry = groups.find((g) => g.group === def.group);
    if (!entry) groups.push((entry = {group: def.group, defs: []}));
    entry.defs.push(def);
  }
  return groups.sort((a, b) => Number(a.group === undefined) - Number(b.group === undefined));
}

/** The `--help` text of a command. */
export function renderHelp<O>(spec: CommandSpec<O>): string {
  const all = [...entries(spec).map(([, def]) => def), HELP as OptionDef<O, unknown>];
  const column = Math.max(...all.map((def) => optionLabel(def).length)) + 4;
  const line = (def: OptionDef<O, unknown>): string[] => {
    const shown = helpDefault(def);
    const text = plain(def.help) + (shown ? ` (${shown})` : "");
    const [first, ...rest] = wrap(text, HELP_WIDTH - column);
    return [`  ${optionLabel(def).padEnd(column - 2)}${first}`, ...rest.map((l) => " ".repeat(column) + l)];
  };
  const out = [`Usage: ${spec.usage}`, "", spec.about.trim(), ""];
  const groups = grouped(spec);
  for (const {group, defs} of groups) {
    if (group !== undefined) out.push(plain(group));
    out.push(...defs.flatMap(line), "");
  }
  // --help closes the last list, or stands apart after headed groups
  if (groups.at(-1)?.group === undefined) out.pop();
  out.push(...line(HELP as OptionDef<O, unknown>));
  return out.join("\n") + "\n";
}

/** Markdown table text: pipes escaped, and outside `code` spans, angle brackets too. */
function cell(text: string): string {
  return text
    .split("`")
    .map((part, i) => (i % 2 === 1 ? part : part.replace(/</g, "&lt;").replace(/>/g, "&gt;")))
    .join("`")
    .replace(/\|/g, "\\|");
}

function tableDefault(def: OptionDef<unknown, unknown>): string {
  if (def.kind === "flag") return "off";
  if (def.required) return "required";
  if (def.default !== undefined) return `\`${def.default}\``;
  return def.defaultText ?? "none";
}

/** A command's markdown option tables (docs/cli.md): one per group, each under its group's name. */
export function renderOptionTables<O>(spec: CommandSpec<O>): string {
  const table = (defs: OptionDef<O, unknown>[]): string[] => [
    "| option | default | meaning |",
    "|---|---|---|",
    ...defs.map((def) => `| ${cell(`\`${optionLabel(def)}\``)} | ${cell(tableDefault(def))} | ${cell(def.help)} |`),
  ];
  const out: string[] = [];
  for (const {group, defs} of grouped(spec)) {
    if (group !== undefined) out.push(`**${group}**`, "");
    out.push(...table(defs), "");
  }
  out.push("`--help` lists the options.");
  return out.join("\n");
}
