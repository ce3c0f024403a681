package core

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/core/bytime"
	"github.com/tallycounters/tally/internal/core/calendar"
)

// TestParseWindows: every form of window reads back as written, and a
// mistake names the bad part.
func TestParseWindows(t *testing.T) {
	docs, err := ParseCounts("posts:likes,views,comments=count(comments),views_today=views per day,views_h=views per hour keep 12," +
		"views_7d=views over 7 days,hot=trend(likes + views/10 + 2*comments, 6h),slow=trend(likes, 2d)")
	if err != nil {
		t.Fatal(err)
	}
	if again, err := ParseCounts(FormatCounts(docs)); err != nil || FormatCounts(again) != FormatCounts(docs) {
		t.Errorf("FormatCounts does not read back: %q, %v", FormatCounts(docs), err)
	}
	ws := docs[0].Windows
	if len(ws) != 5 || ws[0].String() != "views_today=views per day" || ws[0].N != 30 ||
		ws[1].N != 12 || ws[2].Kind != bytime.KindOver || ws[2].N != 7 || ws[4].HalfLife != 48*time.Hour {
		t.Errorf("windows = %+v", ws)
	}
	if hot := ws[3]; len(hot.Terms) != 3 || hot.Terms[1] != (bytime.Term{Field: "views", Weight: 0.1}) || hot.Terms[2] != (bytime.Term{Field: "comments", Weight: 2}) {
		t.Errorf("hot = %+v", hot)
	}
	for spec, want := range map[string]string{
		"posts:views,v=views per fortnight":                "want minute, hour, day, week or month",
		"posts:views,v=views per day keep 0":               "keep 1 to 400",
		"posts:views,v=views over 0 days":                  "over 1 to 400",
		"posts:views,v=shares per day":                     "shares is not a count of posts",
		"posts:c=count(comments),v=c per day":              "is an aggregate, which is kept in total only",
		"posts:views,v=trend(views, 10s)":                  "a duration of a minute to ten years",
		"posts:views,v=trend(views, 213504d)":              "a duration of a minute to ten years", // was 25m26.29s, wrapped around
		"posts:views,v=trend(views, 3651d)":                "a duration of a minute to ten years",
		"posts:views,v=trend(views, 522w)":                 "a duration of a minute to ten years",
		"posts:views,v=trend(views, 9223372036854775807d)": "a duration of a minute to ten years",
		"posts:views,v=trend(views, 100000h)":              "a duration of a minute to ten years",
		"posts:views,v=trend(views, 3650d)":                "",
		"posts:views,v=trend(views, 0d)":                   "a duration of a minute to ten years",
		"posts:views,v=trend(views - 1, 6h)":               "is not count, K*count or count/K",
		"posts:views,views=views per day":                  "given twice",
		"counters:today=total per day;posts:likes":         "",
	} {
		_, err := ParseCounts(spec)
		switch {
		case want == "" && err != nil:
			t.Errorf("ParseCounts(%q) = %v", spec, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("ParseCounts(%q) = %v; want it to say %s", spec, err, want)
		}
	}
}

// TestWindowsWithinADocument: windows whose series could pass a quarter
// of Firestore's 1 MiB a document are refused, with what they would take;
// as many as fit are taken.
func TestWindowsWithinADocument(t *testing.T) {
	many := func(n int) string {
		ws := []string{"posts:views"}
		for i := range n {
			ws = append(ws, fmt.Sprintf("v%d=views per minute keep 400", i))
		}
		return strings.Join(ws, ",")
	}
	_, err := ParseCounts(many(150))
	if err == nil || !strings.Contains(err.Error(), "its windows could take 17") || !strings.Contains(err.Error(), "within 262144 bytes") {
		t.Errorf("150 windows of 400 minutes: %v; want what they take (about 1.7 MB) and the budget", err)
	}
	w := bytime.Window{Field: "v0", Kind: bytime.KindPer, Count: "views", Unit: calendar.Minute, N: 400}
	fit := bytime.MaxWindowBytes / w.Bytes()
	if _, err := ParseCounts(many(fit)); err != nil {
		t.Errorf("%d windows of 400 minutes, %d bytes each: %v", fit, w.Bytes(), err)
	}
	if _, err := ParseCounts(many(fit + 1)); err == nil {
		t.Errorf("%d windows of 400 minutes, %d bytes each: taken", fit+1, w.Bytes())
	}
}
