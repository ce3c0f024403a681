// The types of @tallycounters/web/rank: a document's place among its
// collection's (docs/rank.md).
import type { Tally, Unsubscribe } from "./index";

/** A document's place among its collection's by a field tally ranks, exact at asOf. */
export interface Place {
  /** 1 + the documents whose value was greater at asOf: ties share a place. */
  rank: number;
  /** The documents on the board at asOf. */
  of: number;
  asOf: Date;
  /** Firestore reads the place cost, on the server: 2, or 3 where its range of values holds others. */
  reads: number;
  /** The share of the board at or above it, in percent (3 for the 3rd of 100). */
  top: number;
}

/** Where a value stands among a collection's documents by a field tally ranks, from the board's summary alone, exact at asOf. */
export interface Standing {
  /** The place a document of that value would hold: 1 + the documents in ranges of values above its own. */
  rank: number;
  /** The lowest place it could hold: rank, where its range of values holds no other (each integer from -255 to 255), or rank + the documents in its range. */
  rankAtMost: number;
  of: number;
  /** The share of the board at or above rankAtMost, in percent: "top 3%". */
  top: number;
  asOf: Date;
  /** Firestore reads it cost, on the server: 1. */
  reads: number;
}

/** One document of a page of a board. */
export interface Ranked {
  /** The document's path. */
  document: string;
  /** Its value: NaN, Infinity and -Infinity too. */
  value: number;
  /** 1 + the documents whose value was greater at asOf: ties share a place. */
  rank: number;
}

/** The documents at consecutive places of a board, exact at asOf. */
export interface BoardPage {
  /** In order of place; ties in the order of their ids, from the last. Empty past the end. */
  documents: Ranked[];
  /** The documents on the board at asOf. */
  of: number;
  asOf: Date;
  /** Firestore reads it cost, on the server: the summary, the page's documents, and those of its range of values above it. */
  reads: number;
}

/** The documents at places offset + 1 to offset + limit of collection by field (declared rank(field)), from Increment (limit 1 to 100; 20 unless given). */
export function boardPage(tally: Tally, collection: string, field: string, page?: { offset?: number; limit?: number }): Promise<BoardPage>;

/** Where value stands among collection's documents by field (declared rank(field)), from Increment: one read of the board's summary, at any size. */
export function standingOf(tally: Tally, collection: string, field: string, value: number): Promise<Standing>;

/** The place of the document at documentPath by field (declared rank(field)), from Increment: rejects with code "tally/not-ranked" for one not on the board yet. */
export function rankOf(tally: Tally, documentPath: string, field: string): Promise<Place>;

/** The place now, and again each time the board's summary changes (at most once a second); the collection is never read. */
export function onRank(tally: Tally, documentPath: string, field: string, next: (place: Place) => void, error?: (e: Error) => void): Unsubscribe;
