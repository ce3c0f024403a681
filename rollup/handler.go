package rollup

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"time"

	"cloud.google.com/go/firestore"
	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/extension"
	"github.com/tallycounters/tally/internal/fold"
	"github.com/tallycounters/tally/layout"
)

// Config configures a Handler.
type Config struct {
	Layout   layout.Layout // where the counters are (counter.LayoutFromEnv); zero: the guide's; New panics if it does not read
	Project  string        // events for another project are dropped; "" accepts any
	Database string        // events for another database are dropped; "" means "(default)"
	Spacing  time.Duration // the fold spacing: each parent is written at most once per Spacing; default fold.DefaultSpacing
	Grow     GrowPolicy    // adding shards to busy counters; zero: never
	MaxSkew  time.Duration // how far ahead an event may be dated; default DefaultMaxSkew
	Hold     time.Duration // longest a handler waits for a fold; default DefaultHold
	// ConfirmEvery is the longest a follower instance goes between reads
	// of a parent it holds events for; default five windows.
	ConfirmEvery time.Duration
	Logger       *slog.Logger   // nil discards logs
	OnFold       func(FoldInfo) // if set, called after each fold this handler makes
	// ExtensionCounters are the firestore-counter extension's counters
	// whose shards' events the handler takes, moving their counts into
	// their documents (package extension): the events of any other
	// document's shards are refused as foreign. None: off.
	ExtensionCounters ExtensionCounters
	// ExtensionQuiet is how long after a client's last write of its shard
	// a move may take it: the client may still be waiting for that
	// write's answer, and would show it twice; default
	// DefaultExtensionQuiet.
	ExtensionQuiet time.Duration
	// OnMove, if set, is called after each move of the extension's
	// shards this handler commits.
	OnMove func(MoveInfo)
}

// MoveInfo is what one move of the extension's shards committed, for
// Config.OnMove.
type MoveInfo struct {
	Document         string    // the document moved into
	Committed        time.Time // the commit's time
	Shards, Partials int       // moved
}

// DefaultHold is the longest a handler waits for a fold by default:
// within the deployed function's 60 s timeout.
const DefaultHold = 30 * time.Second

// Handler is the Rollup function: decode the event into a hint, then wait
// until a fold covers it.
type Handler struct {
	decoder decoder
	tracker *tracker
	boards  *boards
	moves   *moves
	hold    time.Duration
	log     *slog.Logger
}

// New returns the Rollup handler for counters in client's database.
func New(client *firestore.Client, cfg Config) *Handler {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.Hold <= 0 {
		cfg.Hold = DefaultHold
	}
	if cfg.Spacing <= 0 {
		cfg.Spacing = fold.DefaultSpacing
	}
	l := core.MustParse(cfg.Layout)
	folder := fold.NewFolder(client, l, cfg.Spacing)
	folder.SetDefaultShards(cfg.Grow.Default)
	t := newTracker(newFolderStore(client, folder), time.Now, cfg.Grow, cfg.ConfirmEvery, log)
	t.onFold = cfg.OnFold
	b := &boards{client: client}
	t.moved = b.note
	return &Handler{
		decoder: decoder{Layout: l, Project: cfg.Project, Database: cfg.Database, MaxSkew: cfg.MaxSkew, Extension: cfg.ExtensionCounters.counters},
		tracker: t,
		boards:  b,
		moves: newMoves(extension.NewMover(client, l, extension.MoverOptions{Counters: cfg.ExtensionCounters.counters, Spacing: cfg.Spacing,
			Quiet: cmp.Or(cfg.ExtensionQuiet, DefaultExtensionQuiet)}), cfg.Spacing, log, cfg.OnMove),
		hold: cfg.Hold,
		log:  log,
	}
}

// Handle is the CloudEvent function. It returns nil once a fold covering
// the event is on the parent, whichever instance made it. It returns an
// error, so that the platform retries, only when no fold could be made in
// time. A malformed, foreign or future-dated event is logged with its id and
// acknowledged.
func (h *Handler) Handle(ctx context.Context, e event.Event) error {
	hint, err := h.decoder.Decode(e, time.Now())
	if errors.Is(err, ErrUnchanged) || errors.Is(err, errNothingToMove) {
		h.log.Debug("rollup: nothing to fold", "event_id", e.ID(), "subject", e.Subject(), "reason", err.Error())
		return nil
	}
	if err != nil {
		h.log.Error("rollup: dropping event", "event_id", e.ID(), "type", e.Type(), "subject", e.Subject(), "error", err.Error())
		return nil
	}
	if len(hint.LeftOut) > 0 {
		h.log.Warn("rollup: a child holds no finite number where a greatest or least reads it: it is left out of them (the rules tally prints refuse such a write)",
			"event_id", e.ID(), "subject", e.Subject(), "counter", hint.Counter, "aggregates", hint.LeftOut)
	}
	ctx, cancel := context.WithTimeout(ctx, h.hold)
	defer cancel()
	if hint.Gone != nil {
		return h.deleted(ctx, hint)
	}
	if hint.Extension {
		return h.moved(ctx, hint)
	}
	if err := h.tracker.Wait(ctx, hint); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			err = errors.New("rollup: no fold covered the event in time")
		}
		h.log.Warn("rollup: will retry", "event_id", hint.EventID, "subject", e.Subject(), "counter", hint.Counter, "shard", hint.Shard, "error", err.Error())
		return err
	}
	h.log.Debug("rollup: covered", "event_id", hint.EventID, "counter", hint.Counter, "shard", hint.Shard)
	if err := h.boards.settle(ctx); err != nil {
		// the moves wait in their boards, folded by the next settle
		h.log.Warn("rollup: a board's summary is behind its moves", "event_id", hint.EventID, "error", err.Error())
	}
	return nil
}

// deleted takes a ranked document deleted off its boards; an error is
// retried, and the retry makes no second move.
func (h *Handler) deleted(ctx context.Context, hint eventHint) error {
	if err := h.boards.unrank(ctx, h.decoder.Layout, hint.Counter, hint.Life, recorded(hint.Gone)); err != nil {
		h.log.Warn("rollup: will retry", "event_id", hint.EventID, "counter", hint.Counter, "error", err.Error())
		return err
	}
	h.log.Debug("rollup: unranked", "event_id", hint.EventID, "counter", hint.Counter)
	return nil
}

// moved answers an event of the extension's shards once a move covers
// it; an error is retried.
func (h *Handler) moved(ctx context.Context, hint eventHint) error {
	if err := h.moves.wait(ctx, hint); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			err = errors.New("rollup: no move covered the event in time")
		}
		h.log.Warn("rollup: will retry", "event_id", hint.EventID, "document", hint.Counter, "error", err.Error())
		return err
	}
	h.log.Debug("rollup: covered by a move", "event_id", hint.EventID, "document", hint.Counter)
	return nil
}
