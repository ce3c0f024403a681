// Types of tally's web client.
import type { FirebaseApp } from "firebase/app";
import type { AppCheck } from "firebase/app-check";
import type { Auth } from "firebase/auth";
import type { CollectionReference, DocumentReference, Firestore, FirestoreError } from "firebase/firestore";

/** The client of one deployed Increment, for one Firebase app: getTally returns one per app. */
export interface Tally {
  readonly url: string;
  /** Resolves once the actions kept from earlier pages are loaded (and being sent). */
  readonly ready: Promise<void>;
}

export interface TallyOptions {
  /** The Increment function's URL. */
  url: string;
  /** The collection of counters, for counters named by id (TALLY_COLLECTION); default "counters". */
  collection?: string;
  /** The subcollection of votes (TALLY_VOTERS_COLLECTION); default "voters". */
  voters?: string;
  /** Sends an App Check token with each request (TALLY_APP_CHECK). */
  appCheck?: AppCheck;
  /** Default getFirestore(app). */
  firestore?: Firestore;
  /** Default getAuth(app): its signed-in user's ID token goes with each request. */
  auth?: Auth;
}

/** One count: a counter by id, or a count field of a document. */
export interface CountRef {
  readonly tally: Tally;
  readonly counter: string;
  readonly field: string;
  /** The document the count is read from. */
  readonly path: string;
}

/** Increment's answer to an action. */
export interface Answer {
  counter: string;
  field?: string;
  shard?: number;
  by?: number;
  vote?: boolean;
  /** Whether the action changed the count: false for a like already counted. */
  changed: boolean;
  /** When its write committed (RFC 3339). */
  committed?: string;
  /** Written into the counted document itself (TALLY_QUIET_IN_DOCUMENT), not a shard. */
  in_document?: boolean;
}

/**
 * The error an action rejects with. tally/refused: Increment refused it (a
 * 4xx other than 401, 429), and it was undone on screen. tally/closed: the
 * client was closed before Increment answered; the action is kept, and the
 * app's next client sends it.
 */
export interface TallyError extends Error {
  code: "tally/refused" | "tally/closed";
  status?: number;
}

export type Unsubscribe = () => void;

/**
 * The client of one deployed Increment for app: the first call makes it,
 * with options (url is required); later calls return it, and throw if
 * given another url.
 */
export function getTally(app: FirebaseApp, options?: TallyOptions): Tally;
/**
 * Stops the client's listeners and sends and closes its store; the next
 * getTally(app, options) makes a new one. Actions not yet answered stay
 * kept, and the next client sends them.
 */
export function closeTally(tally: Tally): Promise<void>;
/** A counter of the guide layout, counters/{id}. */
export function countRef(tally: Tally, id: string): CountRef;
/** A count on one of your documents: countRef(tally, "posts/p1", "likes"). */
export function countRef(tally: Tally, documentPath: string, field: string): CountRef;
/**
 * The count to show, at once after each of this user's actions, never
 * twice. Of a per or over window (countRef(tally, "posts/p1",
 * "likes_today")), the actions on the count it is of show in it.
 */
export function onCount(ref: CountRef, next: (value: number) => void, error?: (e: FirestoreError) => void): Unsubscribe;
/** Whether the signed-in user's vote on the count counts, as shown. */
export function onVote(ref: CountRef, next: (voted: boolean) => void, error?: (e: FirestoreError) => void): Unsubscribe;
/** A unit of time's buckets, in the deployment's TALLY_TIME_ZONE. */
export type Unit = "minute" | "hour" | "day" | "week" | "month";
/** How addTo adds. */
export interface AddOptions {
  /** Counts the signed-in user's action at most once in each bucket of this unit: a repeat is answered changed: false. */
  once?: Unit;
}
/** Adds by (default 1) to the count; kept and sent until Increment answers for good. */
export function addTo(ref: CountRef, by?: number, options?: AddOptions): Promise<Answer>;
/** Adds the user's vote (true) or takes it back (false). */
export function vote(ref: CountRef, on: boolean): Promise<Answer>;

/** How addChild and removeChild write. */
export interface ChildOptions {
  /** The field the write's server timestamp goes in: default "createdAt" (addChild), "removedAt" (removeChild). */
  stamp?: string;
  /** What the child adds to the count until a snapshot holds it: default 1 (addChild), -1 (removeChild). */
  by?: number;
}
/**
 * Adds a document to a collection the aggregate ref counts (a comment to a
 * post), and shows it in the count at once and exactly, until the count
 * holds it.
 */
export function addChild(ref: CountRef, children: CollectionReference, data: Record<string, unknown>, options?: ChildOptions): Promise<DocumentReference>;
/** Deletes a document the aggregate ref counts, and shows it gone from the count at once. */
export function removeChild(ref: CountRef, child: DocumentReference, options?: ChildOptions): Promise<void>;

/** One bucket of a window's series. */
export interface Bucket {
  /** When the bucket starts. */
  start: Date;
  /** What the window's count counted in it: so far, for the current one. */
  count: number;
}
/** How seriesOf and trendNow read a document. */
export interface ReadOptions {
  /** false for a counter of the guide layout (counters/{id}), whose bookkeeping is not in _tally; default true. */
  onDocs?: boolean;
}
/**
 * A per or over window's series, from a snapshot of its document's data:
 * each closed bucket kept, oldest first, then the current one. Empty if
 * the field is not a window folded yet.
 */
export function seriesOf(data: Record<string, unknown> | undefined, field: string, options?: ReadOptions): Bucket[];
/**
 * A trend's score at options.now (default now), from a snapshot of its
 * document's data: the decayed sum of its counts. 0 if the field is not a
 * trend folded yet.
 */
export function trendNow(data: Record<string, unknown> | undefined, field: string, options?: ReadOptions & { now?: Date }): number;
