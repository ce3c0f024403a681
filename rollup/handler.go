package rollup

import (
	"context"
	"log/slog"
	"time"

	"cloud.google.com/go/firestore"
	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/tallycounters/tally/layout"
)

// Config configures a Handler.
type Config struct {
	Layout layout.Layout
	Window time.Duration // group-commit window: parent writes per counter at most one per Window
	Grow   GrowPolicy    // adding shards to busy counters; zero: never
	Logger *slog.Logger  // nil discards logs
}

// DefaultWindow keeps each parent within Firestore's sustained one write per
// second.
const DefaultWindow = time.Second

// Handler is the Rollup function: decode the event, then apply it.
type Handler struct {
	decoder Decoder
	batcher *Batcher
	log     *slog.Logger
}

// New returns the Rollup handler for counters in client's database.
func New(client *firestore.Client, cfg Config) *Handler {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	applier := NewApplier(client, cfg.Layout)
	applier.Spacing = cfg.Window
	applier.Grow = cfg.Grow
	return &Handler{
		decoder: Decoder{Layout: cfg.Layout},
		batcher: NewBatcher(applier, cfg.Window, log),
		log:     log,
	}
}

// Handle is the CloudEvent function. It waits for the group commit that holds
// the event's change, and returns an error only when that commit failed and a
// retry can succeed; a malformed or foreign event is logged and acknowledged.
func (h *Handler) Handle(ctx context.Context, e event.Event) error {
	c, err := h.decoder.Decode(e)
	if err != nil {
		h.log.Error("rollup: dropping event", "event_id", e.ID(), "type", e.Type(), "subject", e.Subject(), "error", err.Error())
		return nil
	}
	if err := h.batcher.Submit(ctx, c); err != nil {
		h.log.Warn("rollup: will retry", "event_id", c.EventID, "counter", c.Counter, "shard", c.Shard, "error", err.Error())
		return err
	}
	h.log.Debug("rollup: committed", "event_id", c.EventID, "counter", c.Counter, "shard", c.Shard)
	return nil
}
