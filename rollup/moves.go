package rollup

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"

	"github.com/tallycounters/tally/internal/extension"
	"github.com/tallycounters/tally/internal/fsrpc"
)

// moves answers the events of the firestore-counter extension's shards
// and partials (package extension): an event is answered once its
// document holds every shard write as of the event's time (moved_as_of),
// by a move of this instance's or another's. On an instance, one move of
// a document runs at a time; an event that comes meanwhile waits for it,
// and for the next if that one does not cover it. A document written
// within the fold spacing is moved once the spacing is over, so that it
// takes at most one write a spacing, folds and moves together. The
// instance whose move wrote the document last moves it again as soon as
// the spacing allows; the others wait a quarter of a spacing more, and
// then mostly find their events covered, with a read of the document
// alone, rather than all moving it at once.
type moves struct {
	mover   *extension.Mover
	spacing time.Duration
	log     *slog.Logger
	onMove  func(MoveInfo)

	mu   sync.Mutex
	docs *simplelru.LRU[string, *docMoves]
	left *simplelru.LRU[string, struct{}] // what was logged as left, so that it is logged once
}

// docMoves is one document's moves on this instance.
type docMoves struct {
	asOf    time.Time            // the latest moved_as_of known
	held    map[string]time.Time // the client shards the last move held, with their update times
	running chan struct{}        // closed once the move in flight ends; nil if none is
	wrote   time.Time            // when this instance's last move committed
}

// rememberMoved is how many documents' moved_as_of an instance keeps.
const rememberMoved = 10000

func newMoves(m *extension.Mover, spacing time.Duration, log *slog.Logger, onMove func(MoveInfo)) *moves {
	docs, _ := simplelru.NewLRU[string, *docMoves](rememberMoved, nil)
	left, _ := simplelru.NewLRU[string, struct{}](rememberMoved, nil)
	return &moves{mover: m, spacing: spacing, log: log, onMove: onMove, docs: docs, left: left}
}

// wait returns once h's document holds every shard write as of h.At, or
// h's shard was written again after h.At and held (a later write's own
// event answers for it); an error, so that the event is delivered again,
// if no move could be made within ctx.
func (m *moves) wait(ctx context.Context, h eventHint) error {
	for {
		m.mu.Lock()
		d, ok := m.docs.Get(h.Counter)
		if !ok {
			d = &docMoves{}
			m.docs.Add(h.Counter, d)
		}
		if !d.asOf.Before(h.At) || d.held[h.ExtShard].After(h.At) {
			m.mu.Unlock()
			return nil
		}
		if ch := d.running; ch != nil {
			m.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		ch := make(chan struct{})
		d.running = ch
		m.mu.Unlock()
		out, err := m.move(ctx, h, d)
		m.mu.Lock()
		if out.AsOf.After(d.asOf) {
			d.asOf = out.AsOf
		}
		d.held = out.Held
		d.running = nil
		close(ch)
		m.mu.Unlock()
		if err != nil {
			return err
		}
	}
}

// move moves h's document (d, as this instance knows it) until a move
// covers h, or holds h's shard as written again since, waiting out the
// spacing and the quiet time of the shards held, and retrying a failed
// move with a backoff, within ctx; it returns the last move's outcome.
func (m *moves) move(ctx context.Context, h eventHint, d *docMoves) (extension.Outcome, error) {
	backoff := minBackoff
	for {
		cctx, committed := fsrpc.WithCommitTime(ctx)
		out, err := m.mover.Move(cctx, h.Counter, h.At)
		if at := committed(); err == nil && out.Shards+out.Partials > 0 { // a move that wrote
			m.mu.Lock()
			d.wrote = at
			m.mu.Unlock()
			if m.onMove != nil {
				m.onMove(MoveInfo{Document: h.Counter, Committed: at, Shards: out.Shards, Partials: out.Partials})
			}
			m.log.Info("rollup: move", "document", h.Counter, "shards", out.Shards, "partials", out.Partials,
				"as_of", out.AsOf.Format(time.RFC3339Nano))
		}
		var wait time.Duration
		switch {
		case errors.Is(err, extension.ErrRaced):
			wait = time.Duration(rand.Int64N(int64(minBackoff))) // another wrote it first: read it again soon
		case err != nil:
			m.log.Warn("rollup: a move failed; trying again", "event_id", h.EventID, "document", h.Counter, "error", err.Error())
			wait, backoff = backoff, min(2*backoff, maxBackoff)
		case out.Undeclared:
			m.leave(h.Counter, "", "rollup: the extension's shards of a document TALLY_EXTENSION_COUNTERS does not declare are left as they are")
			out.AsOf = h.At // nothing will ever be moved of it
			return out, nil
		case out.Gone:
			m.leave(h.Counter, "", "rollup: the extension's shards of a counted document that does not exist are left as they are")
			out.AsOf = h.At // tally never makes a counted document: nothing will cover it
			return out, nil
		default:
			var done bool
			if done, wait = m.next(h, d, out); done {
				return out, nil
			}
		}
		select {
		case <-ctx.Done():
			return out, ctx.Err()
		case <-time.After(max(wait, 0)):
		}
	}
}

// next says, of a move that found nothing wrong, whether it answers h
// (covers it, or holds h's shard as written again since), and if not, how
// long until the next move of h's document: the spacing (a quarter more
// where another instance wrote it last, so that it moves first), the
// quiet time left of the shards held, or a little while.
func (m *moves) next(h eventHint, d *docMoves, out extension.Outcome) (done bool, wait time.Duration) {
	for id, why := range out.Left {
		m.leave(h.Counter, id, "rollup: a shard of the extension's is left as it is: "+why.Error())
	}
	wait = out.Wait
	if held := out.Held[h.ExtShard]; held.After(h.At) || wait <= 0 && !out.More && !out.AsOf.Before(h.At) {
		return true, 0
	}
	m.mu.Lock()
	led := !d.wrote.IsZero() && d.wrote.Equal(out.Written)
	m.mu.Unlock()
	if wait > 0 && out.MovedLast && !led {
		wait += m.spacing / 4 // another instance moved it last: it moves it first
	}
	if wait <= 0 && !out.More {
		wait = max(out.Quiet.Sub(out.Read), minBackoff) // held shards not quiet yet, or dated after the server's clock read it
	}
	return false, wait
}

// leave logs, once an instance's memory of it lasts, that a document's
// shard (or, with no id, all its shards) is left as it is, with why.
func (m *moves) leave(doc, id, msg string) {
	m.mu.Lock()
	logged := m.left.Contains(doc + "/" + id + msg)
	m.left.Add(doc+"/"+id+msg, struct{}{})
	m.mu.Unlock()
	if !logged {
		m.log.Warn(msg, "document", doc, "shard", id)
	}
}
