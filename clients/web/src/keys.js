// The ids tally gives a user's documents, as the functions give them.

/**
 * A user's uid as it names a document of tally's (a vote): "%" and "/"
 * percent-encoded, and the first character of a uid that would still be
 * no document id (".", "..", "__name__"), as package core's UserKey.
 * @param {string} uid
 * @returns {string}
 */
export function userKey(uid) {
  let k = uid.replaceAll("%", "%25").replaceAll("/", "%2F");
  if (k === "." || k === ".." || (k.length >= 4 && k.startsWith("__") && k.endsWith("__"))) {
    k = "%" + k.charCodeAt(0).toString(16).toUpperCase() + k.slice(1);
  }
  return k;
}

/**
 * Compares two document ids as Firestore orders them, by their UTF-8
 * bytes, which is the order of their code points (not of JavaScript's
 * UTF-16 units, which differs past U+FFFF).
 * @param {string} a
 * @param {string} b
 * @returns {number} below 0, 0 or above 0
 */
export function compareIDs(a, b) {
  const x = a[Symbol.iterator]();
  const y = b[Symbol.iterator]();
  for (;;) {
    const p = x.next();
    const q = y.next();
    if (p.done || q.done) return (p.done ? 0 : 1) - (q.done ? 0 : 1);
    const d = /** @type {number} */ (p.value.codePointAt(0)) - /** @type {number} */ (q.value.codePointAt(0));
    if (d !== 0) return d;
  }
}
