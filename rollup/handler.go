package rollup

import (
	"context"
	"log/slog"

	"cloud.google.com/go/firestore"
	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/tallycounters/tally/layout"
)

// Config configures a Handler.
type Config struct {
	Layout layout.Layout
	Logger *slog.Logger // nil discards logs
}

// Handler is the Rollup function: decode the event, then apply it.
type Handler struct {
	decoder Decoder
	applier *Applier
	log     *slog.Logger
}

// New returns the Rollup handler for counters in client's database.
func New(client *firestore.Client, cfg Config) *Handler {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Handler{
		decoder: Decoder{Layout: cfg.Layout},
		applier: NewApplier(client, cfg.Layout),
		log:     log,
	}
}

// Handle is the CloudEvent function. It returns an error only when the change
// was not committed and a retry can succeed; a malformed or foreign event is
// logged and acknowledged.
func (h *Handler) Handle(ctx context.Context, e event.Event) error {
	c, err := h.decoder.Decode(e)
	if err != nil {
		h.log.Error("rollup: dropping event", "event_id", e.ID(), "type", e.Type(), "subject", e.Subject(), "error", err.Error())
		return nil
	}
	res, err := h.applier.Apply(ctx, c.Counter, []Change{c})
	if err != nil {
		h.log.Warn("rollup: will retry", "event_id", c.EventID, "counter", c.Counter, "shard", c.Shard, "error", err.Error())
		return err
	}
	h.log.Debug("rollup: applied", "event_id", c.EventID, "counter", c.Counter, "shard", c.Shard,
		"delta", res.Delta, "skipped", res.Skipped, "repaired", res.Repaired)
	return nil
}
