package bytime

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/tallycounters/tally/internal/core/calendar"
)

// Window is a field of a counted document that tally keeps as a count of
// one of its counts by time, over the buckets of package calendar:
//
//	views_today=views per day         the count in the current bucket
//	views_7d=views over 7 days        in the current bucket and the 6 before it
//	hot=trend(likes + views/10, 6h)   a decayed score, 2^(-age/half-life) a unit
//
// A per or over window is the difference of two exact snapshots of its
// count: the count now and the count at a bucket's start, which a fold
// reads at that time, after the fact. A trend adds each fold's change of
// its counts, weighed by the time of the fold.
type Window struct {
	Field    string
	Kind     string        // KindPer, KindOver or KindTrend
	Count    string        // per, over: the count it windows
	Unit     calendar.Unit // per, over: the buckets
	N        int           // per: closed buckets kept in the series; over: buckets summed
	Terms    []Term        // trend: the counts it weighs
	HalfLife time.Duration
}

// Kinds of Window.
const (
	KindPer   = "per"
	KindOver  = "over"
	KindTrend = "trend"
)

// Term is one count of a trend's weighted sum: Weight units for each of
// Field's.
type Term struct {
	Field  string
	Weight float64
}

// DefaultKeep is how many closed buckets a per window keeps in its series,
// unless its declaration says (`views_today=views per day keep 90`).
var DefaultKeep = map[calendar.Unit]int{calendar.Minute: 60, calendar.Hour: 48, calendar.Day: 30, calendar.Week: 26, calendar.Month: 24}

// MaxKeep bounds the buckets a window keeps: a document holds them all.
const MaxKeep = 400

var (
	perSpec   = regexp.MustCompile(`^\s*([^=\s]+)\s*=\s*([A-Za-z_][A-Za-z0-9_]*)\s+per\s+([a-z]+)\s*(?:keep\s+([0-9]+)\s*)?$`)
	overSpec  = regexp.MustCompile(`^\s*([^=\s]+)\s*=\s*([A-Za-z_][A-Za-z0-9_]*)\s+over\s+([0-9]+)\s+([a-z]+)\s*$`)
	trendSpec = regexp.MustCompile(`^\s*([^=\s]+)\s*=\s*trend\s*\((.*),\s*([^,()]+)\)\s*$`)
	termSpec  = regexp.MustCompile(`^(?:([0-9.]+)\s*\*\s*)?([A-Za-z_][A-Za-z0-9_]*)(?:\s*/\s*([0-9.]+))?$`)
)

// IsWindow reports whether a field's declaration is a window's.
func IsWindow(s string) bool {
	return perSpec.MatchString(s) || overSpec.MatchString(s) || trendSpec.MatchString(s)
}

// Parse reads one window of TALLY_COUNTS (see Window).
func Parse(s string) (Window, error) {
	if m := perSpec.FindStringSubmatch(s); m != nil {
		return parsePer(s, m)
	}
	if m := overSpec.FindStringSubmatch(s); m != nil {
		return parseOver(s, m)
	}
	if m := trendSpec.FindStringSubmatch(s); m != nil {
		return parseTrend(s, m)
	}
	return Window{}, fmt.Errorf("window %q: want name=count per unit [keep N], name=count over N units, or name=trend(count + count/K, half-life)", s)
}

// parsePer reads the window s, "name=count per unit [keep N]", of
// perSpec's submatches m.
func parsePer(s string, m []string) (Window, error) {
	u, err := calendar.ParseUnit(m[3])
	if err != nil {
		return Window{}, fmt.Errorf("window %q: %w", s, err)
	}
	w := Window{Field: m[1], Kind: KindPer, Count: m[2], Unit: u, N: DefaultKeep[u]}
	if m[4] != "" {
		if w.N, err = strconv.Atoi(m[4]); err != nil || w.N < 1 || w.N > MaxKeep {
			return Window{}, fmt.Errorf("window %q: keep 1 to %d buckets", s, MaxKeep)
		}
	}
	return w, nil
}

// parseOver reads the window s, "name=count over N units", of overSpec's
// submatches m.
func parseOver(s string, m []string) (Window, error) {
	u, err := calendar.ParseUnit(m[4])
	if err != nil {
		return Window{}, fmt.Errorf("window %q: %w", s, err)
	}
	n, err := strconv.Atoi(m[3])
	if err != nil || n < 1 || n > MaxKeep {
		return Window{}, fmt.Errorf("window %q: over 1 to %d %ss", s, MaxKeep, u)
	}
	return Window{Field: m[1], Kind: KindOver, Count: m[2], Unit: u, N: n}, nil
}

// parseTrend reads the trend s, "name=trend(count + K*count/K, half-life)",
// of trendSpec's submatches m.
func parseTrend(s string, m []string) (Window, error) {
	h, err := parseHalfLife(m[3])
	if err != nil {
		return Window{}, fmt.Errorf("window %q: %w", s, err)
	}
	w := Window{Field: m[1], Kind: KindTrend, HalfLife: h}
	for _, t := range strings.Split(m[2], "+") {
		term, err := parseTerm(strings.TrimSpace(t))
		if err != nil {
			return Window{}, fmt.Errorf("window %q: %w", s, err)
		}
		w.Terms = append(w.Terms, term)
	}
	return w, nil
}

// parseTerm reads one term of a trend: count, K*count or count/K.
func parseTerm(t string) (Term, error) {
	tm := termSpec.FindStringSubmatch(t)
	if tm == nil {
		return Term{}, fmt.Errorf("the term %q is not count, K*count or count/K", t)
	}
	term := Term{Field: tm[2], Weight: 1}
	var err error
	if tm[1] != "" {
		if term.Weight, err = strconv.ParseFloat(tm[1], 64); err != nil || term.Weight <= 0 {
			return Term{}, fmt.Errorf("the weight %q is not a positive number", tm[1])
		}
	}
	if tm[3] != "" {
		d, err := strconv.ParseFloat(tm[3], 64)
		if err != nil || d <= 0 {
			return Term{}, fmt.Errorf("the divisor %q is not a positive number", tm[3])
		}
		term.Weight /= d
	}
	return term, nil
}

// MaxHalfLife bounds a trend's half-life: ten years. A score that halves
// more slowly is a total, and a longer one, in days, would pass what a
// time.Duration holds (292 years) and wrap around to a short one.
const MaxHalfLife = 3650 * 24 * time.Hour

// parseHalfLife reads a half-life: a Go duration (6h, 90m), or whole days
// (2d) or weeks (1w); a minute to MaxHalfLife.
func parseHalfLife(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	bad := fmt.Errorf("the half-life %q: want a duration of a minute to ten years (6h, 90m, 2d, 1w, 3650d)", s)
	var d time.Duration
	switch {
	case strings.HasSuffix(s, "d"), strings.HasSuffix(s, "w"):
		days := int64(1)
		if strings.HasSuffix(s, "w") {
			days = 7
		}
		n, err := strconv.ParseInt(s[:len(s)-1], 10, 64)
		if err != nil || n < 1 || n > int64(MaxHalfLife/(24*time.Hour))/days {
			return 0, bad // compared before it is multiplied: no wrap around
		}
		d = time.Duration(n*days) * 24 * time.Hour
	default:
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, bad
		}
	}
	if d < time.Minute || d > MaxHalfLife {
		return 0, bad
	}
	return d, nil
}

// String writes w as ParseCounts reads it.
func (w Window) String() string {
	switch w.Kind {
	case KindPer:
		if w.N != DefaultKeep[w.Unit] {
			return fmt.Sprintf("%s=%s per %s keep %d", w.Field, w.Count, w.Unit, w.N)
		}
		return fmt.Sprintf("%s=%s per %s", w.Field, w.Count, w.Unit)
	case KindOver:
		return fmt.Sprintf("%s=%s over %d %ss", w.Field, w.Count, w.N, w.Unit)
	}
	return fmt.Sprintf("%s=trend(%s, %s)", w.Field, w.Weighs(), w.HalfLife)
}

// Weighs is what a trend weighs, as declared: likes + views/10 + 2.5*shares.
func (w Window) Weighs() string {
	terms := make([]string, len(w.Terms))
	for i, t := range w.Terms {
		switch inv := 1 / t.Weight; {
		case t.Weight == 1:
			terms[i] = t.Field
		case t.Weight < 1 && inv == math.Round(inv):
			terms[i] = t.Field + "/" + strconv.FormatFloat(inv, 'g', -1, 64)
		default:
			terms[i] = strconv.FormatFloat(t.Weight, 'g', -1, 64) + "*" + t.Field
		}
	}
	return strings.Join(terms, " + ")
}

// HalvesEvery is a trend's half-life as a declaration writes it: 6h, 90m,
// 2d, 1w.
func (w Window) HalvesEvery() string {
	d := w.HalfLife
	for _, u := range []struct {
		name string
		d    time.Duration
	}{{"w", 7 * 24 * time.Hour}, {"d", 24 * time.Hour}, {"h", time.Hour}, {"m", time.Minute}} {
		if d%u.d == 0 {
			return fmt.Sprintf("%d%s", d/u.d, u.name)
		}
	}
	return d.String()
}

// Counts are the fields w reads.
func (w Window) Counts() []string {
	if w.Kind != KindTrend {
		return []string{w.Count}
	}
	out := make([]string, len(w.Terms))
	for i, t := range w.Terms {
		out[i] = t.Field
	}
	return out
}
