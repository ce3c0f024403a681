// The ids tally gives a user's documents, as the functions give them.

/**
 * A user's uid as it names a document of tally's (a vote): "%" and "/"
 * percent-encoded, and the first character of a uid that would still be
 * no document id (".", "..", "__name__"), as package counting's UserKey.
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
