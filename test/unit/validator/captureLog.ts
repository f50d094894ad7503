import type {TopicLogger} from "../../../src/log.ts";

/** A logger that keeps what it is given: level, fields and message of each line. */
export function captureLog(): {log: TopicLogger; lines: {level: string; fields: object; msg: string}[]} {
  const lines: {level: string; fields: object; msg: string}[] = [];
  const at = (level: string) => (fields: object, msg: string) => void lines.push({level, fields, msg});
  return {log: {info: at("info"), warn: at("warn"), error: at("error"), debug: at("debug")} as unknown as TopicLogger, lines};
}
