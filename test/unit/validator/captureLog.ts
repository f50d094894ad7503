import type {TopicLogger} from "../../../src/log.ts";

type Line = {level: string; fields: object; msg: string};

/** A logger that keeps what it is given: level, fields and message of each line (a child's bindings come first in its fields). */
export function captureLog(): {log: TopicLogger; lines: Line[]} {
  const lines: Line[] = [];
  const logger = (bindings: object): TopicLogger => {
    const at = (level: string) => (fields: object, msg: string) => void lines.push({level, fields: typeof fields === "object" ? {...bindings, ...fields} : fields, msg});
    return {info: at("info"), warn: at("warn"), error: at("error"), debug: at("debug"), child: (more: object) => logger({...bindings, ...more})} as unknown as TopicLogger;
  };
  return {log: logger({}), lines};
}
