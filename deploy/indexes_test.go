package deploy

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tallycounters/tally/internal/core"
)

// TestIndexes: a count with filters on two fields or more gets a
// composite index of them, once however many counts share it, in
// whatever order they name them; tally's
// bookkeeping of parts is kept out of the indexes where aggregates are
// declared; the guide layout needs nothing; and the file reads as
// firestore.indexes.json.
func TestIndexes(t *testing.T) {
	docs, err := core.ParseCounts(`posts:likes,comments=count(comments),shown=count(comments where hidden == false and lang == "en"),` +
		`en=count(comments where lang == "en" and hidden == false),one=count(comments where hidden == true),score=sum(comments.score);` +
		`stats/site:pro=count(/users where plan == "pro" and active == true);shops/*/items:stock`)
	if err != nil {
		t.Fatal(err)
	}
	l := core.Default()
	l.Docs = docs
	want := []string{
		"composite comments collection hidden lang",
		"composite users collection active plan",
		"exempt posts _tally.parts",
		"exempt stats _tally.parts",
		"exempt parts records",
	}
	if got := Indexes(l).Lines(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Lines =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := Indexes(core.Default()).Lines(); len(got) != 0 {
		t.Errorf("the guide layout needs %v", got)
	}
	b, err := json.Marshal(Indexes(l))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Indexes []struct {
			CollectionGroup, QueryScope string
			Fields                      []struct{ FieldPath, Order string }
		}
		FieldOverrides []struct {
			CollectionGroup, FieldPath string
			Indexes                    []any
		}
	}
	if err := json.Unmarshal(b, &file); err != nil || len(file.Indexes) != 2 || file.Indexes[0].Fields[1].Order != "ASCENDING" ||
		len(file.FieldOverrides) != 3 || file.FieldOverrides[2].Indexes == nil {
		t.Errorf("firestore.indexes.json = %s (%v)", b, err)
	}
}
