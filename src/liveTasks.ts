import {fileURLToPath} from "node:url";
import {relative} from "node:path";
import {PROJECT_ROOT} from "./projectRoot.ts";

/**
 * The node's live asynchronous work, for `/ext/v1/debug/tasks`: work the node tracks itself
 * (the REST server's in-flight requests), each with where it was started, and the libuv
 * resources Node keeps alive (timers, sockets, pending file operations) from
 * `process.getActiveResourcesInfo()`, which have a type but no id or source location.
 */

export interface LiveTask {
  /** 1, 2, ... for tracked tasks; 0 for the untracked resources Node reports */
  id: number;
  /** what the task is: `GET /eth/v1/node/version`, or the resource type (`Timeout`, `TCPServerWrap`) */
  procname: string;
  /** where the task was started, relative to the project root; empty when unknown */
  filename: string;
  line: number;
}

const live = new Map<number, LiveTask>();
let lastId = 0;

/** The file and line of the caller's caller (the code that makes a task source). */
function callerLocation(): {filename: string; line: number} {
  const frame = new Error().stack?.split("\n")[3] ?? "";
  const match = /\(?((?:file:\/\/)?\/[^\s()]+):(\d+):\d+\)?\s*$/.exec(frame);
  if (!match) return {filename: "", line: 0};
  const path = match[1].startsWith("file://") ? fileURLToPath(match[1]) : match[1];
  return {filename: relative(PROJECT_ROOT, path), line: Number(match[2])};
}

/**
 * A place that starts tasks, located (file and line) once, where it is made: `track(procname)`
 * records a task until the `done` it returns is called (calling it again does nothing).
 */
export function taskSource(): (procname: string) => () => void {
  const location = callerLocation();
  return (procname) => {
    const id = ++lastId;
    live.set(id, {id, procname, ...location});
    return () => void live.delete(id);
  };
}

/** Tracked tasks (oldest first), then one entry per resource Node keeps alive. */
export function liveTasks(): LiveTask[] {
  const resources = process.getActiveResourcesInfo().map((type) => ({id: 0, procname: type, filename: "", line: 0}));
  return [...live.values(), ...resources];
}
