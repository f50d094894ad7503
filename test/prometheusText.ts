/**
 * A reader of the Prometheus text exposition format (version 0.0.4), written from its
 * description, for tests: `# TYPE name type` lines and samples `name{label="value",...} value`.
 */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  /** metric family name -> type (counter, gauge, histogram, summary, untyped) */
  types: Map<string, string>;
  samples: Sample[];
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+-?\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?/g;

/**
 * A sample value as Prometheus reads it (Go's strconv.ParseFloat): the special values in any
 * case. prom-client writes NaN as `Nan`, as its event-loop gauges do between two scrapes that
 * close together (no event-loop sample in between).
 */
function parseValue(text: string): number {
  const special = text.toLowerCase();
  if (special === "+inf" || special === "inf") return Infinity;
  if (special === "-inf") return -Infinity;
  if (special === "nan") return NaN;
  const value = Number(text);
  if (Number.isNaN(value)) throw new Error(`not a sample value: ${text}`);
  return value;
}

export function parseExposition(text: string): Exposition {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    if (line.startsWith("#")) {
      const type = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
      if (type) types.set(type[1], type[2]);
      continue;
    }
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, name, value] of (m[2] ?? "").matchAll(LABEL)) labels[name] = value.replace(/\\n/g, "\n").replace(/\\"/g, '"').replace(/\\\\/g, "\\");
    samples.push({name: m[1], labels, value: parseValue(m[3])});
  }
  return {types, samples};
}

/** The value of the one sample of `name` whose labels include `labels`; undefined when none. */
export function sampleValue(exposition: Exposition, name: string, labels: Record<string, string> = {}): number | undefined {
  return exposition.samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
}
