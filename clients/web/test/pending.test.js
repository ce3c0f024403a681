import { test } from "node:test";
import assert from "node:assert/strict";

import { agree, holds, outstanding, partAt, pressedOn, shown, votedShown } from "../src/pending.js";
import { micros } from "../src/times.js";

const t = (s) => `2026-11-23T15:00:${s}Z`;

test("an action is on top of the count until as_of reaches its commit, then in it", () => {
  const like = { key: "k1", counter: "posts/p1", field: "likes", by: 1, done: true, committed: t("01.000500") };
  // The fold before the like: 10, and the like on top.
  assert.equal(shown(10, t("01.000499"), [like]), 11);
  // The fold that holds it: 11, and nothing on top. Never 12, never 10.
  assert.equal(shown(11, t("01.000500"), [like]), 11);
  assert.equal(shown(11, t("02"), [like]), 11);
  assert.deepEqual(outstanding([like], t("02")), []);
});

test("an action not yet sent is on top of any count", () => {
  const queued = { key: "k1", counter: "likes", by: 1 };
  assert.equal(shown(5, t("09"), [queued]), 6);
  assert.equal(shown(5, null, [queued]), 6);
});

test("a new snapshot waits while an action may or may not be in it", () => {
  const queued = { key: "k0", counter: "likes", by: 1 };
  const inFlight = { key: "k1", counter: "likes", by: 1, sent: true };
  assert.equal(holds([queued]), false);
  assert.equal(holds([queued, inFlight]), true);
  // Shown on the snapshot from before it was sent: the action on top.
  assert.equal(shown(5, t("07"), [inFlight]), 6);
  const answered = { ...inFlight, sent: false, done: true, committed: t("08") };
  assert.equal(holds([answered]), false);
  assert.equal(shown(6, t("09"), [answered]), 6);
  assert.equal(shown(5, t("07"), [answered]), 6);
});

test("an answer that changed nothing adds nothing", () => {
  const already = { key: "k1", counter: "likes", by: 1, vote: true, done: true };
  assert.equal(shown(7, t("01"), [already]), 7);
  assert.deepEqual(outstanding([already], t("01")), []);
});

test("a like, then an unlike, both pending, show nothing added", () => {
  const like = { key: "k1", counter: "likes", by: 1, vote: true };
  const unlike = { key: "k2", counter: "likes", by: -1, vote: false };
  assert.equal(shown(3, t("01"), [like, unlike]), 3);
  assert.equal(votedShown(false, [like]), true);
  assert.equal(votedShown(false, [like, unlike]), false);
  assert.equal(votedShown(true, []), true);
  assert.equal(votedShown(true, [{ ...unlike, done: true, committed: t("02") }]), false);
});

test("an answered vote shows until the vote document is seen as it left it, and a press after it is sent", () => {
  const like = { key: "k1", counter: "likes", by: 1, vote: true, done: true, committed: t("01") };
  // Answered before the vote document's snapshot: still liked, so the
  // next press is an unlike to send, not a repeat.
  agree(false, [like]);
  assert.equal(votedShown(false, [like]), true);
  // The snapshot with the vote: the document says the rest from now on.
  agree(true, [like]);
  assert.equal(votedShown(true, [like]), true);
  assert.equal(votedShown(false, [like]), false, "another device's unlike, seen later, shows");
  // Once a count holds the vote, the next snapshot of the vote document
  // says the rest, whatever it says: it came after the vote.
  const held = { key: "k3", counter: "likes", by: 1, vote: true, done: true, committed: t("01"), held: true };
  agree(false, [held]);
  assert.equal(votedShown(false, [held]), true, "a snapshot from before the count held it");
  agree(false, [held], true);
  assert.equal(votedShown(false, [held]), false, "another device's unlike, after the count held the like");
  // The last vote says what is shown, not the ones before it.
  assert.equal(votedShown(true, [{ ...like, vote: false, agreed: false }, { ...like, key: "k4", agreed: true }]), true);
  // A vote not yet answered is never agreed, whatever the document says.
  const unlike = { key: "k2", counter: "likes", by: -1, vote: false };
  agree(false, [unlike]);
  assert.equal(votedShown(true, [unlike]), false);
});

test("times compare to the microsecond, whatever their form", () => {
  assert.equal(micros("2026-11-23T15:00:01.0005Z"), micros("2026-11-23T15:00:01.000500Z"));
  assert.equal(micros({ seconds: 1, nanoseconds: 1999 }), 1_000_001);
  assert.equal(micros("1970-01-01T00:00:01.000001Z"), 1_000_001);
  assert.equal(micros(new Date(1)), 1000);
  assert.equal(micros(null), null);
  assert.throws(() => micros("yesterday"));
});

test("a first snapshot taken while actions are in flight is shown on the snapshot they were pressed on", () => {
  const first = { key: "k1", counter: "likes", by: 1, sent: true, base: { value: 4, asOf: t("01") } };
  const second = { key: "k2", counter: "likes", by: 1, sent: true, base: { value: 4, asOf: { seconds: Date.parse(t("00")) / 1000, nanoseconds: 0 } } };
  const answered = { key: "k3", counter: "likes", by: 1, done: true, committed: t("02"), base: null };
  // The oldest base holds neither; answered actions do not matter.
  assert.deepEqual(pressedOn([first, second, answered]), second.base);
  // Whether or not the first snapshot holds them, the number is the base plus both.
  assert.equal(shown(pressedOn([first, second]).value, pressedOn([first, second]).asOf, [first, second]), 6);
  // One pressed before any snapshot: nothing is known until it is answered.
  assert.equal(pressedOn([first, { ...second, base: null }]), null);
  assert.equal(pressedOn([answered]), null);
});

test("a child is on top of the count until the part that holds its id reaches its commit", () => {
  const parts = (lo, hi) => ({ comments: { r: { at: t(lo) }, rM: { at: t(hi) } } });
  const comment = { key: "c1", counter: "posts/p1", field: "comments", by: 1, done: true, committed: t("05"), child: { source: "comments", id: "Qx7" } };
  // Qx7 is in the part that starts at "M": only its time counts.
  assert.equal(partAt(parts("09", "04"), "comments", "Qx7"), micros(t("04")));
  assert.equal(shown(3, t("09"), [comment], parts("09", "04")), 4);
  assert.equal(shown(4, t("01"), [comment], parts("01", "05")), 4);
  // One before "M" is in the first part.
  const early = { ...comment, child: { source: "comments", id: "A1" } };
  assert.equal(shown(3, null, [early], parts("04", "09")), 4);
  assert.equal(shown(4, null, [early], parts("05", "01")), 4);
  // No parts yet, or none of its source: on top.
  assert.equal(shown(3, t("09"), [comment], undefined), 4);
  assert.equal(shown(3, t("09"), [comment], { reviews: { r: { at: t("09") } } }), 4);
  // A deleted child: -1 until its part passes the delete.
  const gone = { ...comment, by: -1 };
  assert.equal(shown(4, null, [gone], parts("09", "04")), 3);
  assert.deepEqual(outstanding([gone], null, parts("01", "06")), []);
});

test("an action written into the document is in the count once _tally.written reaches its commit, whatever as_of", () => {
  const like = { key: "k1", counter: "posts/p1", field: "likes", by: 1, done: true, committed: t("05.123"), inDocument: true };
  // The document before it: written by the fold at 01, as_of 00.
  assert.equal(shown(10, t("00"), [like], undefined, t("01")), 11);
  // The document with it: 11, written as the answer said, as_of unmoved;
  // and after a later write of tally's. Never 12.
  assert.equal(shown(11, t("00"), [like], undefined, t("05.123")), 11);
  assert.equal(shown(11, t("00"), [like], undefined, t("07")), 11);
  assert.deepEqual(outstanding([like], t("00"), undefined, t("05.123")), []);
  // A millisecond short of it: not yet.
  assert.equal(shown(10, t("00"), [like], undefined, t("05.122")), 11);
  // Never written by tally yet: on top.
  assert.equal(shown(10, null, [like], undefined, undefined), 11);
  // One that went to a shard is still held by as_of alone.
  const sharded = { ...like, key: "k2", inDocument: false };
  assert.equal(shown(10, t("00"), [sharded], undefined, t("09")), 11);
});
