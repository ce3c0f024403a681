// Package bytime is what tally keeps of a count by time, whatever the
// document: the declarations of windows and trends (Window, Parse), a per
// or over window's state and how it rolls on from bucket to bucket over
// the buckets of package calendar (State), what a window takes of its
// document (Window.Bytes), and a trend's score by forward decay
// (TrendAdd, TrendNow). It knows nothing of Firestore: package core reads
// the counts at bucket starts, moves a document's windows at a fold with
// these, and writes them.
package bytime
