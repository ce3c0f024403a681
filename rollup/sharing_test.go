package rollup

import (
	"testing"

	"github.com/tallycounters/tally/internal/core"
)

// An instance that finds, read after read, that another wrote the parents
// it wrote last comes to see them shared; one that finds its own write
// there again comes to see them as its own. One odd read changes neither.
func TestSharingFollowsWhatReadsFind(t *testing.T) {
	s := newFakeStore(t)
	tr := s.tracker()
	c := tr.counter("c")
	c.mine = start
	mine := core.Parent{Exists: true, Written: start}
	other := core.Parent{Exists: true, Written: start.Add(1)}
	older := core.Parent{Exists: true, Written: start.Add(-1)}
	read := func(p core.Parent, n int) {
		for range n {
			tr.noteRead(c, p)
		}
	}
	read(other, 10)
	if !tr.sharing() {
		t.Fatal("not sharing after ten reads that found another's write")
	}
	read(mine, 1)
	read(older, 20) // an older view says nothing
	if !tr.sharing() {
		t.Error("one read of its own write, or older ones, ended sharing")
	}
	read(mine, 10)
	if tr.sharing() {
		t.Error("still sharing after ten reads that found its own write")
	}
}

// Folds on views older than a window are trusted until most find them
// stale, and again once most find them current.
func TestOldViewsTrustedWhileMostAreCurrent(t *testing.T) {
	s := newFakeStore(t)
	tr := s.tracker()
	if !tr.trustOldViews() {
		t.Fatal("a new tracker does not trust old views")
	}
	for range 7 {
		tr.noteView(true)
	}
	if tr.trustOldViews() {
		t.Error("old views trusted after seven stale ones")
	}
	for range 7 {
		tr.noteView(false)
	}
	if !tr.trustOldViews() {
		t.Error("old views not trusted after seven current ones")
	}
}
