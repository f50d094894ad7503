import {describe, expect, it} from "@jest/globals";
import {Router} from "../../../src/api/server/router.ts";

/** The route table's paths as a tree of segments, and the paths it has matched kept for the next request. */

function router(): Router<string> {
  const r = new Router<string>();
  r.add("GET", "/eth/v1/beacon/states/{state_id}/root", "stateRoot");
  r.add("GET", "/eth/v1/beacon/blocks/head/root", "headRoot");
  r.add("GET", "/eth/v1/beacon/blocks/{block_id}/root", "blockRoot");
  r.add("POST", "/eth/v1/validator/duties/attester/{epoch}", "attesterDuties");
  return r;
}

describe("Router", () => {
  it("prefers a literal segment, ignores one trailing slash, decodes parameters, and says which methods a path has", () => {
    const r = router();
    expect(r.match("GET", "/eth/v1/beacon/blocks/head/root")).toEqual({route: "headRoot", params: {}});
    expect(r.match("GET", "/eth/v1/beacon/blocks/0x01/root/")).toEqual({route: "blockRoot", params: {block_id: "0x01"}});
    expect(r.match("GET", "/eth/v1/beacon/states/a%20b/root")).toEqual({route: "stateRoot", params: {state_id: "a b"}});
    expect(r.match("GET", "/eth/v1/validator/duties/attester/3")).toEqual({route: undefined, methods: ["POST"]});
    expect(r.match("GET", "/eth/v1/beacon/states/%E0%A4%A/root")).toEqual({route: undefined, badParam: "state_id"});
    expect(r.match("GET", "/eth/v1/beacon/states//root")).toBeUndefined();
    expect(r.match("GET", "/nothing")).toBeUndefined();
  });

  it("answers a path asked again the same, with parameters no handler can change", () => {
    const r = router();
    const first = r.match("POST", "/eth/v1/validator/duties/attester/3");
    const again = r.match("POST", "/eth/v1/validator/duties/attester/3");
    expect(again).toBe(first);
    expect(again).toEqual({route: "attesterDuties", params: {epoch: "3"}});
    expect(Object.isFrozen((again as {params: object}).params)).toBe(true);
    // another method on the same path is its own answer
    expect(r.match("GET", "/eth/v1/validator/duties/attester/3")).toEqual({route: undefined, methods: ["POST"]});
  });

  it("stays right through a flood of distinct paths, which the kept ones are bounded against", () => {
    const r = router();
    for (let epoch = 0; epoch < 5000; epoch++) {
      expect(r.match("POST", `/eth/v1/validator/duties/attester/${epoch}`)).toEqual({route: "attesterDuties", params: {epoch: String(epoch)}});
    }
    expect(r.match("POST", "/eth/v1/validator/duties/attester/0")).toEqual({route: "attesterDuties", params: {epoch: "0"}});
    const kept = () => (r as unknown as {recent: Map<string, Map<string, unknown>>}).recent.get("GET")?.size ?? 0;
    expect(kept()).toBe(0);
    expect((r as unknown as {recent: Map<string, Map<string, unknown>>}).recent.get("POST")!.size).toBeLessThanOrEqual(1024);
    // a long path is matched, never kept
    const long = `/eth/v1/beacon/states/${"a".repeat(300)}/root`;
    expect(r.match("GET", long)).toEqual({route: "stateRoot", params: {state_id: "a".repeat(300)}});
    expect(kept()).toBe(0);
  });
});
