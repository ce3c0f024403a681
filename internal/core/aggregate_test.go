package core

import (
	"strings"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/core/aggregate"
)

func TestParseAggregates(t *testing.T) {
	docs, err := ParseCounts(`posts:likes,comments=count(comments),shown=count(comments where hidden == false and lang == "en, fr"),` +
		`score=sum(comments.score);products:stars=avg(reviews.stars);stats/site:users=count(/users)`)
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 3 || len(docs[0].Fields) != 1 || len(docs[0].Aggregates) != 3 {
		t.Fatalf("= %+v", docs)
	}
	shown := docs[0].Aggregates[1]
	if len(shown.Where) != 2 || shown.Where[0].Value != false || shown.Where[1].Value != "en, fr" {
		t.Errorf("shown = %+v", shown)
	}
	if a := docs[2].Aggregates[0]; !a.Root || a.Child != "users" || !docs[2].One() {
		t.Errorf("users = %+v", a)
	}
	again, err := ParseCounts(FormatCounts(docs))
	if err != nil || FormatCounts(again) != FormatCounts(docs) {
		t.Errorf("FormatCounts does not read back: %q, %v", FormatCounts(docs), err)
	}
	l := Layout{Docs: docs}
	if p, c, ok := l.ParentOf("posts/p1/comments/c1"); !ok || p != "posts/p1" || c != (aggregate.Child{Source: "comments", ID: "c1"}) {
		t.Errorf("ParentOf(comment) = %q, %+v, %v", p, c, ok)
	}
	if p, c, ok := l.ParentOf("users/u1"); !ok || p != "stats/site" || c != (aggregate.Child{Source: "/users", ID: "u1"}) {
		t.Errorf("ParentOf(user) = %q, %+v, %v", p, c, ok)
	}
	for _, id := range []string{"alice@example.com", "a b", "x:y", "a+b", "100%", "caf\u00e9", "\U0001F600", strings.Repeat("z", MaxIDLength)} {
		if p, c, ok := l.ParentOf("users/" + id); !ok || p != "stats/site" || c.ID != id {
			t.Errorf("ParentOf(users/%s) = %q, %+v, %v; want every id Firestore takes", id, p, c, ok)
		}
		if p, c, ok := l.ParentOf("posts/" + id + "/comments/" + id); !ok || p != "posts/"+id || c.ID != id {
			t.Errorf("ParentOf(a comment %s) = %q, %+v, %v", id, p, c, ok)
		}
	}
	if _, _, ok := l.ParentOf("posts/p1/likes/c1"); ok {
		t.Error("ParentOf took a collection nothing aggregates")
	}
	if _, err := l.Check("posts/p1", "comments"); err == nil || !strings.Contains(err.Error(), "cannot be incremented") {
		t.Errorf("Check(comments) = %v, want it refused as an aggregate", err)
	}
	if _, _, _, err := l.ParseShardPath("stats/site/lives/1/shards/0"); err == nil {
		t.Error("a shard of a document of aggregates only was taken")
	}
}

func TestParseAggregatesNamesTheBadPart(t *testing.T) {
	for spec, want := range map[string]string{
		"posts:c=count()":                               "collection",
		"posts:c=count(comments where x = 1)":           "want field == value",
		"posts:c=count(comments where x == 1.5)":        "not a quoted string",
		"posts:c=median(comments.x)":                    "want name=count(child)",
		"posts:c=max(comments.x where y = 1)":           "want field == value",
		"posts:c=sum(comments)":                         "takes child.field",
		"posts:c=count(shards)":                         "tally's subcollections",
		"posts:c=count(a/b)":                            "a path from the root",
		"posts:c=count(/users/u1)":                      "document path",
		"stats/site:likes":                              "aggregates only",
		"stats/site:c=count(comments)":                  "from the root",
		"posts:likes,likes=count(comments)":             "given twice",
		"posts:c=count(comments where x == 'a)":         "not closed",
		"posts:a=count(/users);stats/s:b=count(/users)": "onto one place",
	} {
		_, err := ParseCounts(spec)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseCounts(%q) = %v, want an error saying %q", spec, err, want)
		}
	}
}

func TestCoversChild(t *testing.T) {
	at := time.Now()
	parts := map[string]aggregate.Parts{"c": {
		aggregate.PartKey(""):  {At: at},
		aggregate.PartKey("M"): {At: at},
	}}
	p := Parent{Exists: true, Parts: parts}
	if !p.CoversChild("c", "Q", at) || p.CoversChild("c", "Q", at.Add(time.Microsecond)) || p.CoversChild("d", "Q", at) {
		t.Error("CoversChild: want a child covered by its part's time only")
	}
}
