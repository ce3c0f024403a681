package core

import (
	"strings"
	"testing"
)

// TestRankDeclarations: rank(field) ranks a count, an aggregate or a
// trend declared beside it, on a collection named without '*', and
// says why it refuses anything else.
func TestRankDeclarations(t *testing.T) {
	docs, err := ParseCounts("posts:likes,rank(likes),hot=trend(likes, 6h),rank( hot );users:points=sum(games.points),rank(points)")
	if err != nil {
		t.Fatal(err)
	}
	if got := FormatCounts(docs); got != "posts:likes,hot=trend(likes, 6h0m0s),rank(likes),rank(hot);users:points=sum(games.points),rank(points)" {
		t.Errorf("FormatCounts = %q", got)
	}
	l := Default()
	l.Docs = docs
	boards := l.Boards("posts/p1")
	if len(boards) != 2 || boards[0].ID() != "posts:likes" || !boards[0].Integers || boards[0].Grid.Step != 0 ||
		boards[1].Field != "hot" || boards[1].Grid.Step == 0 || boards[1].Integers {
		t.Errorf("the boards of posts/p1 = %+v", boards)
	}
	if b := l.Boards("users/u1"); len(b) != 1 || b[0].Integers { // a sum may hold fractions
		t.Errorf("the boards of users/u1 = %+v", b)
	}
	if b, err := l.Board("posts", "views"); err == nil || !strings.Contains(err.Error(), "posts:rank(likes)") {
		t.Errorf("Board(posts, views) = %+v, %v; want an error naming the boards declared", b, err)
	}
	for bad, want := range map[string]string{
		"posts:likes,rank(views)":                     `"views" is none of the fields tally keeps there`,
		"posts:likes,rank(likes),rank(likes)":         "given twice",
		"users/*/posts:likes,rank(likes)":             "without '*'",
		"posts:views,today=views per day,rank(today)": "a window falls back at its boundaries",
		"posts:likes,rank()":                          "none of the fields",
	} {
		if _, err := ParseCounts(bad); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseCounts(%q) = %v; want an error saying %q", bad, err, want)
		}
	}
}
