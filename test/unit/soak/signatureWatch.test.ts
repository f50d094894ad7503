import {describe, expect, it} from "@jest/globals";
import {SignatureWatch} from "../../soak/signatureWatch.ts";

/** The soak's outside check of slashable signatures: the phase0 spec's is_slashable_attestation_data and double proposals. */
describe("soak signature watch", () => {
  it("finds double votes, surround votes (both ways) and double proposals, and nothing in honest histories", () => {
    const honest = new SignatureWatch();
    for (let epoch = 1; epoch < 10; epoch++) honest.vote(3, epoch - 1, epoch, `0x${epoch}`);
    honest.vote(3, 8, 9, "0x9"); // the same vote seen twice
    honest.proposal(5, 12, "0xaa");
    honest.proposal(5, 12, "0xaa");
    expect(honest.problems).toEqual([]);

    const w = new SignatureWatch();
    w.vote(1, 2, 3, "0xa");
    w.vote(1, 2, 3, "0xb");
    w.vote(2, 1, 5, "0xa");
    w.vote(2, 2, 4, "0xb");
    w.vote(4, 2, 3, "0xa");
    w.vote(4, 1, 4, "0xb");
    w.proposal(7, 20, "0x1");
    w.proposal(7, 20, "0x2");
    expect(w.problems).toEqual([
      "double vote: validator 1, target 3",
      "surround vote: validator 2, 2->4 and 1->5",
      "surround vote: validator 4, 1->4 and 2->3",
      "double proposal: proposer 7, slot 20",
    ]);
  });
});
