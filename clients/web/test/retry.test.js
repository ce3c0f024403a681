import { test } from "node:test";
import assert from "node:assert/strict";

import { MAX_BACKOFF, next } from "../src/retry.js";

const half = () => 0.5;

test("200 is done", () => {
  assert.deepEqual(next(200, null, 1), { then: "done" });
});

test("429 and 503 wrote nothing: retry after Retry-After", () => {
  assert.deepEqual(next(429, "7", 1), { then: "retry", wait: 7000 });
  assert.deepEqual(next(503, "1", 3), { then: "retry", wait: 1000 });
  assert.deepEqual(next(503, null, 1), { then: "retry", wait: 1000 });
});

test("504 and no answer may have been applied: retry with backoff, unsure", () => {
  assert.deepEqual(next(504, null, 1, half), { then: "retry", wait: 250, unsure: true });
  assert.deepEqual(next(0, null, 3, half), { then: "retry", wait: 1000, unsure: true });
  assert.equal(next(0, null, 40, () => 0.999999).wait <= MAX_BACKOFF, true);
});

test("an expired token is refreshed once", () => {
  assert.deepEqual(next(401, null, 1), { then: "refresh" });
  assert.deepEqual(next(401, null, 2), { then: "fail" });
});

test("other refusals wrote nothing and will not succeed: undo", () => {
  for (const s of [400, 403, 404, 413, 415]) {
    assert.deepEqual(next(s, null, 1), { then: "fail" }, `status ${s}`);
  }
});

test("500 wrote nothing: retry with backoff", () => {
  assert.deepEqual(next(500, null, 2, half), { then: "retry", wait: 500 });
});
