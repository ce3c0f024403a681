package increment

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"

	"github.com/tallycounters/tally/internal/core"
)

// A signed-in user's votes and limited steps each run a transaction on the
// user's own documents (the vote, the user's limits). Many at once from one
// user (a double tap on a slow network, a script) would contend for them
// in Firestore, each aborting and retrying the others until their deadline
// passed, unanswered. So on each instance they take turns, one user at a
// time; a user with maxUserWaiting waiting already is refused at once; and
// a user past a limit is refused here, with no transaction, until the
// limit allows one more: a limit only tightens as other instances spend.
const maxUserWaiting = 64

// users holds each signed-in user's turn on this instance, and the limits
// they were last refused on.
type users struct {
	mu      sync.Mutex
	queues  map[string]*userQueue
	limited *simplelru.LRU[string, limitedUntil] // uid and counter: when a step may be admitted again
}

type userQueue struct {
	turn    chan struct{}
	waiting int
}

// limitedUntil is a refusal past a limit and when it ends.
type limitedUntil struct {
	err   *core.Error
	until time.Time
}

func newUsers() *users {
	l, _ := simplelru.NewLRU[string, limitedUntil](10000, nil)
	return &users{queues: map[string]*userQueue{}, limited: l}
}

// errUserBusy refuses a step of a user who has maxUserWaiting waiting.
var errUserBusy = &core.Error{Code: core.TooMany, RetryAfter: time.Second,
	Message: "too many increments at once from this user: nothing was written; retry after 1 s"}

// wait waits for uid's turn; release ends it.
func (u *users) wait(ctx context.Context, uid string) (release func(), err error) {
	u.mu.Lock()
	q := u.queues[uid]
	if q == nil {
		q = &userQueue{turn: make(chan struct{}, 1)}
		u.queues[uid] = q
	}
	if q.waiting >= maxUserWaiting {
		u.mu.Unlock()
		return nil, errUserBusy
	}
	q.waiting++
	u.mu.Unlock()
	done := func() {
		u.mu.Lock()
		if q.waiting--; q.waiting == 0 {
			delete(u.queues, uid)
		}
		u.mu.Unlock()
	}
	select {
	case q.turn <- struct{}{}:
		return func() { <-q.turn; done() }, nil
	case <-ctx.Done():
		done()
		return nil, errBusy
	}
}

// refused is the refusal in force for uid's steps on counter, if a limit
// refused one lately and does not yet allow another.
func (u *users) refused(uid, counter string, now time.Time) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	l, ok := u.limited.Get(uid + "\x00" + counter)
	if !ok || !now.Before(l.until) {
		return nil
	}
	e := *l.err
	e.RetryAfter = l.until.Sub(now)
	return &e
}

// note remembers a refusal past a limit of uid's steps on counter.
func (u *users) note(uid, counter string, err error, now time.Time) {
	var le *core.Error
	if !errors.As(err, &le) || le.Code != core.TooMany || le == errUserBusy || le.RetryAfter <= 0 {
		return // not a limit's refusal
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.limited.Add(uid+"\x00"+counter, limitedUntil{err: le, until: now.Add(le.RetryAfter)})
}
