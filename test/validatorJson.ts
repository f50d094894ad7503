/** One validator as the Beacon API's validators answer writes it (a ValidatorResponse), for tests that need answers of that shape. */
export const validatorResponseJson = {
  index: "3",
  balance: "32000000000",
  status: "active_ongoing",
  validator: {
    pubkey: "0x" + "aa".repeat(48),
    withdrawal_credentials: "0x" + "00".repeat(32),
    effective_balance: "32000000000",
    slashed: false,
    activation_eligibility_epoch: "0",
    activation_epoch: "0",
    exit_epoch: "18446744073709551615",
    withdrawable_epoch: "18446744073709551615",
  },
};
