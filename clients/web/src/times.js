// Server times as whole microseconds since the epoch, the precision
// Firestore keeps: a count's as_of, and when an action committed.

/**
 * Microseconds since the epoch of an RFC 3339 time ("2026-11-23T15:02:11.418325Z"),
 * of a Firestore Timestamp (seconds, nanoseconds), or of a Date.
 * @param {string | {seconds: number, nanoseconds: number} | Date | null | undefined} t
 * @returns {number | null} null when there is no time
 */
export function micros(t) {
  if (t == null || t === "") return null;
  if (t instanceof Date) return t.getTime() * 1000;
  if (typeof t === "object" && "seconds" in t) {
    return t.seconds * 1e6 + Math.floor(t.nanoseconds / 1000);
  }
  const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$/.exec(String(t));
  if (!m) throw new Error(`tally: not an RFC 3339 time: ${t}`);
  const whole = Date.parse(m[1] + m[3]);
  const fraction = Number((m[2] || "").padEnd(6, "0").slice(0, 6));
  return whole * 1000 + fraction;
}
