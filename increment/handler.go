// Package increment is the Increment HTTP function: it adds to one random
// shard of a counter with a single server-side increment.
package increment

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/layout"
)

// Config configures a Handler. Zero fields take the defaults below.
type Config struct {
	Layout        layout.Layout
	DefaultShards int           // shards of an auto-created counter; default 10
	AutoCreate    bool          // create missing counters instead of 404
	MaxStep       int64         // bound on |by|; default 1000
	CORSOrigins   []string      // origins browsers may call from; "*" for any
	CacheTTL      time.Duration // how long num_shards is cached; default 10s
	Logger        *slog.Logger  // nil discards logs
}

// WriteTimeout bounds the Firestore work of one increment; past it the
// caller gets 503 and may retry.
const WriteTimeout = 10 * time.Second

// Defaults for Config's zero fields.
const (
	DefaultShards   = 10
	DefaultMaxStep  = 1000
	DefaultCacheTTL = 10 * time.Second
)

// Handler is the Increment function.
type Handler struct {
	writer  *Writer
	maxStep int64
	cors    cors
	log     *slog.Logger
}

// Response is the body of a successful increment.
type Response struct {
	Counter string `json:"counter"`
	Shard   int    `json:"shard"`
	By      int64  `json:"by"`
}

// New returns the Increment handler for counters in client's database.
func New(client *firestore.Client, cfg Config) *Handler {
	if cfg.MaxStep <= 0 {
		cfg.MaxStep = DefaultMaxStep
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Handler{
		writer: NewWriter(client, WriterConfig{
			Layout: cfg.Layout, DefaultShards: cfg.DefaultShards, AutoCreate: cfg.AutoCreate, CacheTTL: cfg.CacheTTL,
		}),
		maxStep: cfg.MaxStep,
		cors:    newCORS(cfg.CORSOrigins),
		log:     cfg.Logger,
	}
}

// ServeHTTP answers POST with one shard increment and OPTIONS with CORS.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.cors.handle(w, r) {
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST, OPTIONS")
		WriteError(w, errorf(http.StatusMethodNotAllowed, "method %s not allowed; use POST", r.Method))
		return
	}
	resp, err := h.increment(w, r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

func (h *Handler) increment(w http.ResponseWriter, r *http.Request) (Response, error) {
	req, err := parseRequest(w, r)
	if err != nil {
		return Response{}, err
	}
	if err := req.validate(h.maxStep); err != nil {
		return Response{}, err
	}
	ctx, cancel := context.WithTimeout(r.Context(), WriteTimeout)
	defer cancel()
	shard, err := h.writer.Add(ctx, req.Counter, req.By)
	if err != nil {
		return Response{}, err
	}
	return Response{Counter: req.Counter, Shard: shard, By: req.By}, nil
}

// fail logs server-side failures with their cause and answers the client.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	code, _ := statusOf(err)
	if code >= 500 {
		h.log.Error("increment failed", "error", err.Error(), "path", r.URL.Path)
	}
	WriteError(w, err)
}
