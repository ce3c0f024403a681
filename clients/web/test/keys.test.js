import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

import { compareIDs, userKey } from "../src/keys.js";
import { partAt } from "../src/pending.js";

// The fixture package core's TestUserKey reads too: the functions and the
// client name a user's vote alike.
const userKeys = JSON.parse(readFileSync(new URL("../../../testdata/formats/userkey.json", import.meta.url), "utf8"));

test("userKey names every uid's vote as the functions do", () => {
  assert.ok(Object.keys(userKeys.keys).length > 0);
  for (const [uid, key] of Object.entries(userKeys.keys)) assert.equal(userKey(uid), key, uid);
});

// Firestore orders ids by their UTF-8 bytes: U+FFFD before an emoji, which
// JavaScript's < puts the other way round.
test("ids compare in Firestore's order, and a child finds its part by it", () => {
  const ids = ["", "a", "ab", "b", "\u00e9", "\uFFFD", "\u{1F600}", "\u{1F600}a"];
  for (let i = 0; i < ids.length; i++) {
    for (let j = 0; j < ids.length; j++) {
      assert.equal(Math.sign(compareIDs(ids[i], ids[j])), Math.sign(i - j), `${ids[i]} vs ${ids[j]}`);
    }
  }
  const parts = { c: { r: { at: "2026-11-23T15:00:01Z" }, "r\uFFFD": { at: "2026-11-23T15:00:02Z" }, "r\u{1F600}": { at: "2026-11-23T15:00:03Z" } } };
  assert.equal(partAt(parts, "c", "\u{1F600}x"), partAt(parts, "c", "\u{1F600}"));
  assert.notEqual(partAt(parts, "c", "\uFFFDz"), partAt(parts, "c", "\u{1F600}"));
});
