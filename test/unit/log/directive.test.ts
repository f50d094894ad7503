import {describe, expect, it} from "@jest/globals";
import {PassThrough} from "node:stream";
import {LogManager, parseLogDirective, topicLevel} from "../../../src/log.ts";

describe("log directive", () => {
  it("parses a plain level", () => {
    expect(parseLogDirective("DEBUG")).toEqual({level: "DEBUG", trace: [], required: [], disabled: []});
  });

  it("parses every section", () => {
    const d = parseLogDirective("NOTICE; TRACE:chain,forkchoice; REQUIRED:none; DISABLED:api");
    expect(d).toEqual({level: "NOTICE", trace: ["chain", "forkchoice"], required: [], disabled: ["api"]});
    expect(topicLevel(d, "chain")).toBe("trace");
    expect(topicLevel(d, "api")).toBe("silent");
    expect(topicLevel(d, "db")).toBe("notice");
  });

  it.each([
    ["", "empty"],
    ["LOUD", "unknown log level"],
    ["INFO; TRACE", "has no"],
    ["INFO; VERBOSE:chain", "unknown section"],
    ["INFO; TRACE:chain; TRACE:db", "given twice"],
    ["INFO; DISABLED:", "names no topics"],
    ["INFO; TRACE:Bad Topic", "invalid topic"],
    ["INFO; REQUIRED:api; DISABLED:api", "both REQUIRED and DISABLED"],
  ])("rejects %j with a reason", (text, reason) => {
    expect(() => parseLogDirective(text)).toThrow(reason);
  });

  it("changes topic levels at run time", () => {
    const out = new PassThrough();
    const lines: string[] = [];
    out.on("data", (c: Buffer) => lines.push(...c.toString().trim().split("\n")));
    const manager = new LogManager({directive: parseLogDirective("INFO"), format: "json", destination: out});
    const chain = manager.get("chain");
    const api = manager.get("api");
    chain.debug("hidden");
    api.info("shown");
    manager.apply(parseLogDirective("INFO; TRACE:chain; DISABLED:api"));
    chain.debug("now shown");
    api.info("now hidden");
    const msgs = lines.map((l) => JSON.parse(l).msg);
    expect(msgs).toEqual(["shown", "now shown"]);
  });
});
