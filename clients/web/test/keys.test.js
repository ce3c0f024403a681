import { test } from "node:test";
import assert from "node:assert/strict";

import { userKey } from "../src/keys.js";

// The same table as package counting's TestUserKey: the functions and the
// client name a user's vote alike.
test("userKey names every uid's vote as the functions do", () => {
  const want = {
    alice: "alice", "a/b": "a%2Fb", "a%2Fb": "a%252Fb", "100%": "100%25", ".": "%2E", "..": "%2E.",
    __x__: "%5F_x__", "a:b": "a:b", "caf\u00e9": "caf\u00e9",
  };
  for (const [uid, key] of Object.entries(want)) assert.equal(userKey(uid), key, uid);
});
