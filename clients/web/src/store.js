// The user's actions until the count holds them, kept in IndexedDB so that
// an offline browser, or a page closed mid-request, loses none, and shared
// with the other tabs of the same browser over a BroadcastChannel. Any tab
// may send any action: its Idempotency-Key makes it count once.

const STORE = "actions";

/**
 * @typedef {object} Store
 * @property {() => Promise<import("./pending.js").Action[]>} all
 * @property {(a: import("./pending.js").Action) => Promise<void>} put
 * @property {(key: string) => Promise<void>} remove
 * @property {(changed: () => void) => () => void} onChange another tab changed the actions
 * @property {() => Promise<void>} close stops telling and hearing the other tabs, and closes the database
 */

/**
 * Opens the store of actions named name (one per app and Increment URL).
 * Where IndexedDB is missing (a private window of some browsers), actions
 * are kept in memory, for this page only.
 * @param {string} name
 * @returns {Store}
 */
export function openStore(name) {
  const channel = typeof BroadcastChannel === "function" ? new BroadcastChannel(name) : null;
  const db = typeof indexedDB === "object" ? open(name) : null;
  const memory = new Map();
  const tell = () => channel?.postMessage("changed");
  /**
   * Runs work in a transaction of the given mode; resolves with its
   * request's result once the transaction completes.
   * @param {IDBTransactionMode} mode
   * @param {(s: IDBObjectStore) => IDBRequest | undefined} work
   * @returns {Promise<any>}
   */
  const run = async (mode, work) => {
    const d = await /** @type {Promise<IDBDatabase>} */ (db); // run only where there is one
    return new Promise((resolve, reject) => {
      const tx = d.transaction(STORE, mode);
      const req = work(tx.objectStore(STORE));
      tx.oncomplete = () => resolve(req?.result);
      tx.onerror = () => reject(tx.error);
    });
  };
  return {
    all: () => (db ? run("readonly", (s) => s.getAll()) : Promise.resolve([...memory.values()])),
    put: async (a) => {
      if (db) await run("readwrite", (s) => s.put(a));
      else memory.set(a.key, a);
      tell();
    },
    remove: async (key) => {
      if (db) await run("readwrite", (s) => s.delete(key));
      else memory.delete(key);
      tell();
    },
    onChange: (changed) => {
      if (!channel) return () => {};
      const listener = () => changed();
      channel.addEventListener("message", listener);
      return () => channel.removeEventListener("message", listener);
    },
    close: async () => {
      channel?.close();
      (await db?.catch(() => null))?.close();
    },
  };
}

/**
 * @param {string} name
 * @returns {Promise<IDBDatabase>}
 */
function open(name) {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(name, 1);
    req.onupgradeneeded = () => req.result.createObjectStore(STORE, { keyPath: "key" });
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}
