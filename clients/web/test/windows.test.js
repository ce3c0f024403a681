import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

import { seriesOf, trendNow, windowShown } from "../src/windows.js";

const at = (s) => `2026-11-25T10:${s}Z`;
const ms = (s) => Date.parse(at(s));
// likes_today's state: the bucket of 10:00 to 10:01 (minutes, for the test).
const perMinute = { b: at("00:00"), n: at("01:00"), c: "likes", k: "per", v: 40, s: {} };

test("a press shows in a window of its count at once, and once its fold holds it, never twice", () => {
  const like = { key: "k1", counter: "posts/p1", field: "likes", by: 1, sent: true };
  assert.equal(windowShown(3, at("00:10"), perMinute, [like], ms("00:20")), 4);
  const answered = { ...like, sent: false, done: true, committed: at("00:20.000100") };
  assert.equal(windowShown(3, at("00:10"), perMinute, [answered], ms("00:21")), 4);
  // The fold that holds it: 4, nothing on top.
  assert.equal(windowShown(4, at("00:20.000100"), perMinute, [answered], ms("00:21")), 4);
});

test("a per window whose bucket has ended shows only the presses since", () => {
  const before = { key: "k1", counter: "posts/p1", field: "likes", by: 1, done: true, committed: at("00:50") };
  const after = { key: "k2", counter: "posts/p1", field: "likes", by: 1, sent: true };
  // At 10:01:05 the snapshot is still of 10:00's bucket (the boundary job
  // has not moved it): the new bucket holds the press not yet answered,
  // and not the one of 10:00:50.
  assert.equal(windowShown(7, at("00:40"), perMinute, [before, after], ms("01:05")), 1);
  assert.equal(windowShown(7, at("00:40"), perMinute, [before], ms("01:05")), 0);
  // Before the end, both are in it.
  assert.equal(windowShown(7, at("00:40"), perMinute, [before, after], ms("00:55")), 9);
});

test("an over window keeps every press on top, its oldest bucket until the boundary job drops it", () => {
  const over = { ...perMinute, k: "over" };
  const like = { key: "k1", counter: "posts/p1", field: "likes", by: 1, sent: true };
  assert.equal(windowShown(12, at("00:40"), over, [like], ms("01:05")), 13);
});

test("a take-back subtracts in the window", () => {
  const unlike = { key: "k1", counter: "posts/p1", field: "likes", by: -1, vote: false, sent: true };
  assert.equal(windowShown(3, at("00:10"), perMinute, [unlike], ms("00:20")), 2);
});

// The fixture package bytime's TestWindowFormat reads too: the state as
// the functions store it, and the series a reader makes of it.
const windowFormat = JSON.parse(readFileSync(new URL("../../../testdata/formats/window.json", import.meta.url), "utf8"));

test("a series is read from a window's state as the functions store it", () => {
  const field = windowFormat.window.split("=")[0];
  const data = { ...windowFormat.document, _tally: { windows: { [field]: windowFormat.stored } } };
  assert.deepEqual(
    seriesOf(data, field),
    windowFormat.series.map((b) => ({ start: new Date(b.start), count: b.count })),
  );
});

test("a series lists every kept bucket, oldest first, then the current one", () => {
  const data = {
    likes: 47,
    likes_today: 7,
    _tally: { windows: { likes_today: { ...perMinute, s: { "2026-11-25T09:59:00Z": 0, "2026-11-25T09:58:00Z": 5 } } } },
  };
  assert.deepEqual(seriesOf(data, "likes_today"), [
    { start: new Date("2026-11-25T09:58:00Z"), count: 5 },
    { start: new Date("2026-11-25T09:59:00Z"), count: 0 },
    { start: new Date(at("00:00")), count: 7 },
  ]);
  assert.deepEqual(seriesOf(data, "likes"), []);
  assert.deepEqual(seriesOf(undefined, "likes_today"), []);
  // A counter of the guide layout keeps it at the top.
  assert.equal(seriesOf({ total: 47, windows: { today: { ...perMinute, c: "total" } } }, "today", { onDocs: false }).at(-1)?.count, 7);
});

test("a trend's score now decays by its half-life, and orders as its field does", () => {
  const h = 6 * 3600;
  const landmark = new Date("2026-01-01T00:00:00Z");
  const now = new Date(landmark.getTime() + 10 * h * 1000);
  // S = log2 of 3 units weighed at 10 half-lives past the landmark.
  const data = (S) => ({ hot: S, _tally: { trends: { hot: { h, l: landmark } } } });
  assert.ok(Math.abs(trendNow(data(10 + Math.log2(3)), "hot", { now }) - 3) < 1e-9);
  const later = new Date(now.getTime() + h * 1000);
  assert.ok(Math.abs(trendNow(data(10 + Math.log2(3)), "hot", { now: later }) - 1.5) < 1e-9);
  assert.equal(trendNow(data(-Infinity), "hot", { now }), 0);
  assert.equal(trendNow({ hot: 3 }, "hot", { now }), 0, "not a trend folded yet");
  assert.ok(trendNow(data(11), "hot", { now }) > trendNow(data(10.5), "hot", { now }));
});
