import pino, {type Logger} from "pino";

/**
 * Logging: one pino root, one child logger per topic (chain, forkchoice, db, api, validator, ...).
 * The run-time directive of the product spec (section 4.2) sets each topic's level.
 *
 * NOTICE has no pino level of its own; it is added as a custom level 35, between info (30)
 * and warn (40), so `NOTICE` shows notices, warnings and errors but not plain info lines.
 */
export const LEVELS = ["TRACE", "DEBUG", "INFO", "NOTICE", "WARN", "ERROR", "FATAL"] as const;
export type LogLevelName = (typeof LEVELS)[number];
export type TopicLogger = Logger<"notice">;

export interface LogDirective {
  level: LogLevelName;
  trace: string[];
  required: string[];
  disabled: string[];
}

const TOPIC_RE = /^[a-z][a-z0-9_-]*$/;

/** Parses `<LEVEL>; TRACE:<topics>; REQUIRED:<topics or none>; DISABLED:<topics or none>`; throws with the reason. */
export function parseLogDirective(text: string): LogDirective {
  const parts = text.trim().split(";").map((p) => p.trim());
  if (parts.length === 0 || parts[0] === "") throw new Error("empty log directive");
  const level = parts[0].toUpperCase();
  if (!(LEVELS as readonly string[]).includes(level)) {
    throw new Error(`unknown log level "${parts[0]}"; expected one of ${LEVELS.join(", ")}`);
  }
  const directive: LogDirective = {level: level as LogLevelName, trace: [], required: [], disabled: []};
  const seen = new Set<string>();
  for (const part of parts.slice(1)) {
    if (part === "") continue;
    const colon = part.indexOf(":");
    if (colon < 0) throw new Error(`section "${part}" has no ":"; expected TRACE:, REQUIRED: or DISABLED:`);
    const name = part.slice(0, colon).trim().toUpperCase();
    if (name !== "TRACE" && name !== "REQUIRED" && name !== "DISABLED") {
      throw new Error(`unknown section "${part.slice(0, colon).trim()}"; expected TRACE, REQUIRED or DISABLED`);
    }
    if (seen.has(name)) throw new Error(`section ${name} given twice`);
    seen.add(name);
    const list = part.slice(colon + 1).trim();
    if (list === "") throw new Error(`section ${name} names no topics (write "none" for none)`);
    const topics = list.toLowerCase() === "none" ? [] : list.split(",").map((t) => t.trim().toLowerCase());
    for (const topic of topics) {
      if (!TOPIC_RE.test(topic)) throw new Error(`invalid topic "${topic}" in section ${name}`);
    }
    directive[name.toLowerCase() as "trace" | "required" | "disabled"] = topics;
  }
  const clash = directive.required.find((t) => directive.disabled.includes(t));
  if (clash) throw new Error(`topic "${clash}" is both REQUIRED and DISABLED`);
  return directive;
}

/** The directive as text, in the form parseLogDirective reads. */
export function formatLogDirective(d: LogDirective): string {
  const topics = (list: string[]) => (list.length === 0 ? "none" : list.join(","));
  const sections = [d.level as string];
  if (d.trace.length > 0) sections.push(`TRACE:${d.trace.join(",")}`);
  if (d.required.length > 0 || d.disabled.length > 0) sections.push(`REQUIRED:${topics(d.required)}`, `DISABLED:${topics(d.disabled)}`);
  return sections.join("; ");
}

const PINO_LEVEL: Record<LogLevelName, string> = {
  TRACE: "trace",
  DEBUG: "debug",
  INFO: "info",
  NOTICE: "notice",
  WARN: "warn",
  ERROR: "error",
  FATAL: "fatal",
};

/** The pino level a topic runs at under a directive. */
export function topicLevel(directive: LogDirective, topic: string): string {
  if (directive.disabled.includes(topic)) return "silent";
  if (directive.trace.includes(topic)) return "trace";
  return PINO_LEVEL[directive.level];
}

export interface LoggerOptions {
  directive: LogDirective;
  format: "text" | "json";
  /** Where lines go; stdout by default (tests pass a stream). */
  destination?: NodeJS.WritableStream;
}

/**
 * Owns the topic loggers; `apply` changes every topic's level at run time. Loggers may be
 * taken at module load, before the command line is read: `configure` later switches format,
 * destination and levels under them.
 */
export class LogManager {
  private readonly root: Logger<"notice">;
  private readonly topics = new Map<string, TopicLogger>();
  private directive: LogDirective;
  private format: "text" | "json";
  private destination: NodeJS.WritableStream;

  constructor(opts: LoggerOptions) {
    this.directive = opts.directive;
    this.format = opts.format;
    this.destination = opts.destination ?? process.stdout;
    const sink = {write: (line: string) => this.destination.write(this.format === "text" ? toTextLine(line) : line)};
    this.root = pino<"notice">({level: "trace", customLevels: {notice: 35}, base: undefined, timestamp: pino.stdTimeFunctions.isoTime}, sink);
  }

  get(topic: string): TopicLogger {
    let logger = this.topics.get(topic);
    if (!logger) {
      logger = this.root.child({topic}) as TopicLogger;
      logger.level = topicLevel(this.directive, topic);
      this.topics.set(topic, logger);
    }
    return logger;
  }

  configure(opts: LoggerOptions): void {
    this.format = opts.format;
    this.destination = opts.destination ?? process.stdout;
    this.apply(opts.directive);
  }

  apply(directive: LogDirective): void {
    this.directive = directive;
    for (const [topic, logger] of this.topics) logger.level = topicLevel(directive, topic);
  }

  current(): LogDirective {
    return this.directive;
  }
}

const LEVEL_LABEL: Record<number, string> = {10: "TRC", 20: "DBG", 30: "INF", 35: "NOT", 40: "WRN", 50: "ERR", 60: "FAT"};

/** `--log-format text`: `time LVL topic message key=value ...`. */
function toTextLine(json: string): string {
  try {
    const {time, level, topic, msg, ...rest} = JSON.parse(json);
    const fields = Object.entries(rest)
      .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`)
      .join(" ");
    return `${time} ${LEVEL_LABEL[level] ?? level} ${(topic ?? "node").padEnd(10)} ${msg ?? ""}${fields ? " " + fields : ""}\n`;
  } catch {
    return json;
  }
}

/** The process-wide log manager, INFO text logs to stdout until `initLogging` configures it. */
const manager = new LogManager({directive: parseLogDirective(process.env.LOG_LEVEL ?? "INFO"), format: "text"});

export function initLogging(opts: LoggerOptions): LogManager {
  manager.configure(opts);
  return manager;
}

export function getLogger(topic: string): TopicLogger {
  return manager.get(topic);
}

export function logManager(): LogManager {
  return manager;
}
