// Package aggregate is what tally keeps of aggregates of the app's
// documents (a count, sum or average over a collection, such as a post's
// comments), whatever the counted document: their declarations (Parse),
// the parts of each collection a document holds them in (Part, Parts,
// Merge, Values), and a part's refold at a fold's read time (Doc.Refold):
// Firestore's aggregations over one range of child ids, split past
// PartMax children, and, for sums and averages, the children's records,
// kept in part documents and brought up to date child by child. A refold
// is bounded in time (PartStep), and what it did stays done. Package core
// says where a document's children and part documents are, and writes
// the parts with the counts.
package aggregate
