import {describe, expect, it} from "@jest/globals";
import {liveTasks, taskSource} from "../../../src/liveTasks.ts";

/** The tracked tasks of /ext/v1/debug/tasks: oldest first, each until its `done`, wherever it sits in the list. */

const tracked = () => liveTasks().filter((task) => task.id > 0);

describe("live tasks", () => {
  it("lists tracked tasks oldest first, with where their source was made, until each is done", () => {
    const track = taskSource();
    const before = tracked().length;
    const done = ["first", "second", "third", "fourth"].map((name) => track(name));
    const mine = () => tracked().slice(before);
    expect(mine().map((task) => task.procname)).toEqual(["first", "second", "third", "fourth"]);
    expect(mine()[0]).toMatchObject({filename: "test/unit/node/liveTasks.test.ts"});
    expect(mine()[1].id).toBeGreaterThan(mine()[0].id);
    // from the middle, the newest end, and the oldest end; a second done changes nothing
    done[1]();
    done[1]();
    expect(mine().map((task) => task.procname)).toEqual(["first", "third", "fourth"]);
    done[3]();
    const fifth = track("fifth");
    expect(mine().map((task) => task.procname)).toEqual(["first", "third", "fifth"]);
    done[0]();
    expect(mine().map((task) => task.procname)).toEqual(["third", "fifth"]);
    done[2]();
    fifth();
    expect(tracked()).toHaveLength(before);
    // Node's own resources follow, with id 0
    expect(liveTasks().slice(tracked().length).every((task) => task.id === 0)).toBe(true);
  });
});
