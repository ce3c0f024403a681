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
}

// docMoves is one document's moves on this instance.
type docMoves struct {
	asOf    time.Time     // the latest moved_as_of known
	running chan struct{} // closed once the move in flight ends; nil if none is
	wrote   time.Time     // when this instance's last move committed
}

// rememberMoved is how many documents' moved_as_of an instance keeps.
const rememberMoved = 10000

func newMoves(m *extension.Mover, spacing time.Duration, log *slog.Logger, onMove func(MoveInfo)) *moves {
	docs, _ := simplelru.NewLRU[string, *docMoves](rememberMoved, nil)
	return &moves{mover: m, spacing: spacing, log: log, onMove: onMove, docs: docs}
}

// wait returns once h's document holds every shard write as of h.At; an
// error, so that the event is delivered again, if no move could be made
// within ctx.
func (m *moves) wait(ctx context.Context, h eventHint) error {
	for {
		m.mu.Lock()
		d, ok := m.docs.Get(h.Counter)
		if !ok {
			d = &docMoves{}
			m.docs.Add(h.Counter, d)
		}
		if !d.asOf.Before(h.At) {
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
		asOf, err := m.move(ctx, h, d)
		m.mu.Lock()
		if asOf.After(d.asOf) {
			d.asOf = asOf
		}
		d.running = nil
		close(ch)
		m.mu.Unlock()
		if err != nil {
			return err
		}
	}
}

// move moves h's document (d, as this instance knows it) until a move
// covers h, waiting out the spacing and retrying a failed move with a
// backoff, within ctx; it returns the moved_as_of it reached.
func (m *moves) move(ctx context.Context, h eventHint, d *docMoves) (time.Time, error) {
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
		wait := out.Wait
		switch {
		case errors.Is(err, extension.ErrRaced):
			wait = time.Duration(rand.Int64N(int64(minBackoff))) // another wrote it first: read it again soon
		case err != nil:
			m.log.Warn("rollup: a move failed; trying again", "event_id", h.EventID, "document", h.Counter, "error", err.Error())
			wait, backoff = backoff, min(2*backoff, maxBackoff)
		case out.Gone:
			m.log.Warn("rollup: the extension's shards of a counted document that does not exist are left as they are",
				"event_id", h.EventID, "document", h.Counter)
			return h.At, nil // tally never makes a counted document: nothing will cover it
		default:
			for id, why := range out.Left {
				m.log.Warn("rollup: a shard of the extension's that holds what is not a count is left as it is",
					"document", h.Counter, "shard", id, "reason", why.Error())
			}
			if wait <= 0 && !out.More && !out.AsOf.Before(h.At) {
				return out.AsOf, nil
			}
			m.mu.Lock()
			led := !d.wrote.IsZero() && d.wrote.Equal(out.Written)
			m.mu.Unlock()
			if wait > 0 && !led {
				wait += m.spacing / 4 // another instance wrote it last: it moves it first
			}
			if wait <= 0 && !out.More {
				wait = minBackoff // dated after the server's clock read it: a little later
			}
		}
		select {
		case <-ctx.Done():
			return out.AsOf, ctx.Err()
		case <-time.After(max(wait, 0)):
		}
	}
}
