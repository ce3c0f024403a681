// The types of @tallycounters/web/likes: a like as a document, the
// signed-in user's own, which a count such as likes=count(likes) counts
// (docs/web.md).
import type { CollectionReference, FirestoreError } from "firebase/firestore";
import type { CountRef, Unsubscribe } from "./index";

/** Where like and onLike find the likes. */
export interface LikeOptions {
  /** The collection of likes the count counts: default the one named as its field, under its document (posts/p1/likes for countRef(tally, "posts/p1", "likes")). */
  likes?: CollectionReference;
}
/**
 * Adds the signed-in user's like (true), or takes it back (false): their
 * document, {likes}/{uid}, holding only its time "at", which a count such
 * as likes=count(likes) counts. Shown in the count at once, and never
 * twice; one already as asked writes nothing. Rejects with status 401 when
 * no user is signed in.
 */
export function like(ref: CountRef, on: boolean, options?: LikeOptions): Promise<void>;
/** Calls next with whether the signed-in user's like is there: their own press at once. */
export function onLike(ref: CountRef, next: (liked: boolean) => void, error?: (e: FirestoreError) => void, options?: LikeOptions): Unsubscribe;
