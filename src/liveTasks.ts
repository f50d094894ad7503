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

/**
 * Tracked tasks, oldest first, as a list whose links live in the tasks themselves. A Map would
 * do, but the REST server adds and removes a task per request, and under load the in-flight
 * count swings between 0 and the connection count every turn of the loop: the Map's table was
 * reallocated each swing, half of what the old generation took in under that load.
 */
interface TrackedTask extends LiveTask {
  prev: TrackedTask | null;
  next: TrackedTask | null;
}
let oldest: TrackedTask | null = null;
let newest: TrackedTask | null = null;
let lastId = 0;

function unlink(task: TrackedTask): void {
  if (task.prev) task.prev.next = task.next;
  else oldest = task.next;
  if (task.next) task.next.prev = task.prev;
  else newest = task.prev;
  task.prev = task.next = null;
}

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
    const task: TrackedTask = {id: ++lastId, procname, filename: location.filename, line: location.line, prev: newest, next: null};
    if (newest) newest.next = task;
    else oldest = task;
    newest = task;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      unlink(task);
    };
  };
}

/** Tracked tasks (oldest first), then one entry per resource Node keeps alive. */
export function liveTasks(): LiveTask[] {
  const resources = process.getActiveResourcesInfo().map((type) => ({id: 0, procname: type, filename: "", line: 0}));
  const tracked: LiveTask[] = [];
  for (let task = oldest; task !== null; task = task.next) tracked.push({id: task.id, procname: task.procname, filename: task.filename, line: task.line});
  return [...tracked, ...resources];
}
