// How to answer each of Increment's answers: every refusal it sends means
// nothing was written, and says whether and when to try again.

/** Longest wait between two tries, in milliseconds. */
export const MAX_BACKOFF = 30_000;

/**
 * What to do after one try of an action.
 * @param {number} status the answer's HTTP status; 0 for no answer (offline, a lost connection)
 * @param {string | null} retryAfter its Retry-After header
 * @param {number} attempt tries so far, 1 for the first
 * @param {() => number} [random] in [0, 1), for the jitter
 * @returns {{then: "done" | "retry" | "refresh" | "fail", wait?: number, unsure?: boolean}}
 *   done: answered; retry after wait ms (unsure: it may have been applied, so
 *   the count is held until it is answered); refresh: the ID token expired,
 *   send again with a fresh one; fail: refused, nothing written: undo it.
 */
export function next(status, retryAfter, attempt, random = Math.random) {
  const backoff = () => Math.round(random() * Math.min(MAX_BACKOFF, 500 * 2 ** (attempt - 1)));
  if (status >= 200 && status < 300) return { then: "done" };
  if (status === 429 || status === 503) {
    const s = Number.parseInt(retryAfter ?? "", 10);
    return { then: "retry", wait: Number.isFinite(s) && s >= 0 ? s * 1000 : 1000 };
  }
  if (status === 401 && attempt === 1) return { then: "refresh" };
  if (status === 0 || status === 504) return { then: "retry", wait: backoff(), unsure: true };
  if (status >= 500) return { then: "retry", wait: backoff() };
  return { then: "fail" };
}
