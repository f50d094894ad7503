import {valueField} from "./adapters.ts";

/**
 * Result selectors: how a legacy method's result is read from its route's REST answer, where
 * the removed server answered with less (a field of the REST data) or in another shape (the
 * health status inside an object). A selector works on both forms of the answer side by side:
 * its JSON (what REST wrote) and the value the route's codec decoded from it (which tells the
 * legacy number encoding where the integers are).
 */

export interface Answer {
  json: unknown;
  value: unknown;
}

export interface ResultSelector {
  /** how to read the REST answer, for the migration guide: "`data.peer_id`", "`root` and `slot` of each item of `data`" */
  readonly describe: (base: string) => string;
  /** the same as a jq filter over the REST body, where one says it: `.data.peer_id` */
  readonly jq?: string;
  pick(answer: Answer): Answer;
}

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x);

/** The REST answer's field at `keys` (JSON names): `field("header", "message", "slot")`. */
export function field(...keys: string[]): ResultSelector {
  return {
    describe: (base) => `\`${base}.${keys.join(".")}\``,
    jq: `.data.${keys.join(".")}`,
    pick(answer) {
      let {json, value} = answer;
      for (const key of keys) {
        if (!isObject(json)) throw new Error(`the REST answer has no object where ${keys.join(".")} should be`);
        if (!(key in json)) throw new Error(`the REST answer lacks ${keys.join(".")}`);
        json = json[key];
        value = valueField(value, key);
      }
      return {json, value};
    },
  };
}

/** Of each item of a list, only the fields `keys`. */
export function eachWith(...keys: string[]): ResultSelector {
  return {
    describe: (base) => `${keys.map((k) => `\`${k}\``).join(" and ")} of each item of \`${base}\``,
    jq: `.data | map({${keys.join(", ")}})`,
    pick({json, value}) {
      if (!Array.isArray(json)) throw new Error("the REST answer is not a list");
      const values = Array.isArray(value) ? value : [];
      return {
        json: json.map((item) => Object.fromEntries(keys.map((k) => [k, (item as Record<string, unknown>)[k]]))),
        value: values.map((item) => Object.fromEntries(keys.map((k) => [k, valueField(item, k)]))),
      };
    },
  };
}

/** The answer inside an object under `key`: `{"health": 206}`. */
export function within(key: string): ResultSelector {
  return {
    describe: (base) => `\`{"${key}": ${base}}\``,
    pick: ({json, value}) => ({json: {[key]: json}, value: {[key]: value}}),
  };
}
