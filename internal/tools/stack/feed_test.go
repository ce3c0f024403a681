package stack

import (
	"testing"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/testkit/layouttest"
	"github.com/tallycounters/tally/setup"
)

// The demo's feed shows, of what is declared, today's count of the likes,
// or else of the views, with the count it is of, and the trend.
func TestFeedShowsTodayAndTheTrend(t *testing.T) {
	for _, tc := range []struct {
		counts              string
		today, of, hot, why string
	}{
		{"posts:likes,views,likes_today=likes per day,views_today=views per day,hot=trend(likes, 6h)", "likes_today", "likes", "hot", "likes today first"},
		{"posts:likes,views,views_today=views per day,views_7d=views over 7 days,hot=trend(likes + views/10, 6h)", "views_today", "views", "hot", "the README's counts by time"},
		{"posts:likes,views,views_h=views per hour", "", "", "", "no window by day"},
	} {
		l := core.Default()
		var err error
		if l.Docs, err = core.ParseCounts(tc.counts); err != nil {
			t.Fatal(err)
		}
		s := &Stack{o: Options{Config: setup.Config{Layout: layouttest.Public(l)}}}
		f := s.feed()
		if f.Today != tc.today || f.TodayOf != tc.of || f.Hot != tc.hot {
			t.Errorf("%s: today %q of %q, hot %q; want %q of %q, %q", tc.why, f.Today, f.TodayOf, f.Hot, tc.today, tc.of, tc.hot)
		}
	}
}
