package increment

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"cloud.google.com/go/firestore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/internal/core"
)

// Rate is a limit of N increments per Per: N at once, then one every
// Per/N, as a generic cell rate algorithm (GCRA) has it. The zero Rate is
// no limit.
type Rate struct {
	N   int
	Per time.Duration
}

// ParseRate reads "N/s", "N/m", "N/h" or "off".
func ParseRate(s string) (Rate, error) {
	if s == "off" {
		return Rate{}, nil
	}
	num, unit, ok := strings.Cut(s, "/")
	n, err := strconv.Atoi(num)
	per := map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour}[unit]
	if !ok || err != nil || n < 1 || n > 1_000_000 || per == 0 {
		return Rate{}, fmt.Errorf("%q is not a rate such as 10/m (N/s, N/m or N/h, N from 1 to 1000000) or off", s)
	}
	return Rate{N: n, Per: per}, nil
}

// String is the rate as ParseRate reads it.
func (r Rate) String() string {
	if r.N == 0 {
		return "off"
	}
	unit := map[time.Duration]string{time.Second: "s", time.Minute: "m", time.Hour: "h"}[r.Per]
	return fmt.Sprintf("%d/%s", r.N, unit)
}

// admit decides one increment under r for a key whose theoretical arrival
// time is tat (zero: never seen), at now: it returns the key's next tat, or,
// past the limit, how long until one more would be admitted.
func (r Rate) admit(tat, now time.Time) (next time.Time, wait time.Duration) {
	if r.N == 0 {
		return tat, 0
	}
	interval := r.Per / time.Duration(r.N)
	tolerance := r.Per - interval // the burst: N at once
	start := maxTime(tat, now)
	if over := start.Sub(now) - tolerance; over > 0 {
		return tat, over
	}
	return start.Add(interval), 0
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// Limits bound how often one signed-in user may increment: Counter on each
// counter, User over all counters. They hold across every Increment
// instance: each user's state is one Firestore document, read and written
// in the transaction that makes the increment.
type Limits struct {
	Counter Rate
	User    Rate
}

// on reports whether any limit is set.
func (l Limits) on() bool { return l.Counter.N > 0 || l.User.N > 0 }

// Fields of a user's limits document, core.Limits.
const (
	fieldUserTAT     = "tat"      // the user's theoretical arrival time, over all counters
	fieldCounterTATs = "counters" // counter id to the user's theoretical arrival time on it
)

// limited is a refusal past a limit: nothing was written. It says how
// long exactly until the limit admits one more.
func limited(which string, r Rate, wait time.Duration) error {
	secs := max(1, int(math.Ceil(wait.Seconds())))
	return &core.Error{Code: core.TooMany, RetryAfter: wait,
		Message: fmt.Sprintf("too many increments: at most %s %s; nothing was written; retry after %d s", r, which, secs)}
}

// spend checks op's user against the limits inside tx, and records the
// increment if it is admitted; past a limit it returns the 429 refusal.
// It reads the user's document (1 read) and writes it (1 write), and
// drops the counters whose limit has long reset, so the document stays
// small.
func (w *shardWriter) spend(tx *firestore.Transaction, op commitOp, now time.Time) error {
	ref := w.layout.Limits(w.client, op.Voter)
	snap, err := tx.Get(ref)
	if err != nil && status.Code(err) != codes.NotFound {
		return err
	}
	var userTAT time.Time
	counters := map[string]any{}
	if snap != nil && snap.Exists() {
		d := snap.Data()
		userTAT, _ = d[fieldUserTAT].(time.Time)
		if m, ok := d[fieldCounterTATs].(map[string]any); ok {
			for id, v := range m {
				if t, ok := v.(time.Time); ok && t.After(now) {
					counters[id] = t
				}
			}
		}
	}
	counterKey := op.Counter
	if w.layout.OnDocs() {
		counterKey += ":" + op.Count.Field // each count has its own limit
	}
	counterTAT, _ := counters[counterKey].(time.Time)
	nextCounter, waitCounter := op.Limits.Counter.admit(counterTAT, now)
	nextUser, waitUser := op.Limits.User.admit(userTAT, now)
	switch {
	case waitCounter >= waitUser && waitCounter > 0:
		return limited("on one counter for one user", op.Limits.Counter, waitCounter)
	case waitUser > 0:
		return limited("over all counters for one user", op.Limits.User, waitUser)
	}
	doc := map[string]any{}
	expires := now
	if op.Limits.User.N > 0 {
		doc[fieldUserTAT], expires = nextUser, maxTime(expires, nextUser)
	}
	if op.Limits.Counter.N > 0 {
		counters[counterKey] = nextCounter
	}
	for _, v := range counters {
		expires = maxTime(expires, v.(time.Time))
	}
	doc[fieldCounterTATs], doc[core.FieldExpiresAt] = counters, expires
	return tx.Set(ref, doc)
}
