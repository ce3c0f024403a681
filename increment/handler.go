// Package increment is the Increment HTTP function: it adds to one random
// shard of a counter with a single server-side increment. It can verify
// callers' Firebase ID tokens, count each signed-in user's vote once, answer
// a retried request (same Idempotency-Key) as it answered the first, and
// hold public callers to existing counters and small steps. With counts on
// the app's documents, a request names the document and its count field;
// votes, keys and limits are per count, and a missing document is a 404.
package increment

import (
	"cmp"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"regexp"
	"time"

	"cloud.google.com/go/firestore"
	"firebase.google.com/go/v4/appcheck"
	"firebase.google.com/go/v4/auth"

	"github.com/tallycounters/tally/internal/adder"
	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/core/calendar"
	"github.com/tallycounters/tally/internal/fold"
	"github.com/tallycounters/tally/internal/httpjson"
	"github.com/tallycounters/tally/layout"
)

// Config configures a Handler. Zero fields take the defaults below.
type Config struct {
	Layout        layout.Layout // where the counters are (counter.LayoutFromEnv); zero: the guide's; New panics if it does not read
	DefaultShards int           // shards of an auto-created counter; default core.DefaultShards
	AutoCreate    bool          // create any missing counter instead of 404
	MaxStep       int64         // bound on |by|; default 1000
	CORSOrigins   []string      // origins browsers may call from; "*" for any
	CacheTTL      time.Duration // how long num_shards is cached; default adder.DefaultCacheTTL
	Logger        *slog.Logger  // nil discards logs

	// Auth, if set, verifies each caller's Firebase ID token (Authorization:
	// Bearer); a request without a valid one gets 401.
	Auth TokenVerifier
	// Public says that anyone may call: |by| is then at most PublicMaxStep,
	// the body must be JSON, and a missing counter is created only if its id
	// matches CounterPattern (or AutoCreate is set).
	Public         bool
	PublicMaxStep  int64          // default 1
	CounterPattern *regexp.Regexp // whole ids; nil matches none
	// IdempotencyTTL is how long a request's Idempotency-Key is kept: a
	// retry within it gets the first answer and writes nothing. Default 24h.
	IdempotencyTTL time.Duration
	// Timeout bounds the Firestore work of one request. Default
	// DefaultTimeout.
	Timeout time.Duration
	// MaxInFlight is how many requests one Handler works on at once; one
	// past it waits up to QueueWait for its turn, and is then refused (503
	// with Retry-After) before anything is written. Default
	// DefaultMaxInFlight.
	MaxInFlight int
	// Limits bound how often one signed-in user may make a plain step (Auth
	// set): past one, the answer is 429 with Retry-After and nothing is
	// written. Votes count once per user already.
	Limits Limits
	// VotesOnly makes a public Increment take votes and nothing else.
	VotesOnly bool
	// AppCheck, if set, verifies each request's Firebase App Check token
	// (X-Firebase-AppCheck): a request without a valid one gets 401.
	AppCheck AppCheckVerifier
	// Now is the clock the cache of counters expires by; nil: time.Now.
	Now func() time.Time
	// InDocument writes a plain step of a quiet counted document into the
	// document itself, in one write, where the document had no write for
	// Spacing (the folds'; default fold.DefaultSpacing) and has no window,
	// trend or rank: no shard, no event, no fold (core/own.go); with an
	// Idempotency-Key, its record is created in the same commit (two
	// writes). Its answer's shard is adder.InItself.
	InDocument bool
	Spacing    time.Duration
}

// AppCheckVerifier checks a Firebase App Check token: the Firebase Admin
// SDK's appcheck.Client is one.
type AppCheckVerifier interface {
	VerifyToken(token string) (*appcheck.DecodedAppCheckToken, error)
}

// TokenVerifier checks a Firebase ID token: the Firebase Admin SDK's
// auth.Client is one.
type TokenVerifier interface {
	VerifyIDToken(ctx context.Context, idToken string) (*auth.Token, error)
}

// Defaults for Config's zero fields.
const (
	DefaultMaxStep        = 1000
	DefaultPublicMaxStep  = 1
	DefaultIdempotencyTTL = 24 * time.Hour
	DefaultTimeout        = 20 * time.Second // within the deployed function's 30 s
	DefaultMaxInFlight    = 100              // above the deployed function's concurrency of 80
)

// QueueWait is the longest a request waits for its turn when MaxInFlight
// requests are in flight, before it is refused.
const QueueWait = time.Second

// Handler is the Increment function.
type Handler struct {
	writer  *shardWriter
	cfg     Config
	layout  core.Layout // cfg.Layout's
	maxStep int64
	cors    cors
	log     *slog.Logger
	turns   chan struct{} // one for each request in flight
	users   *users        // signed-in users' turns and known refusals
}

// Response is the body of a successful increment. Changed says whether this
// call changed the count: false for a vote already counted (or a vote taken
// back that was not), in which case Shard is -1 and By 0.
type Response struct {
	Counter string `json:"counter"`
	Field   string `json:"field,omitempty"`
	Shard   int    `json:"shard"`
	By      int64  `json:"by"`
	Vote    *bool  `json:"vote,omitempty"`
	Changed bool   `json:"changed"`
	// Committed is when the change committed (RFC 3339, UTC): a count whose
	// as_of is at or past it holds it, one whose as_of is before does not.
	Committed string `json:"committed,omitempty"`
	// InDocument says the increment was written into the counted document
	// itself (Config.InDocument; Shard is -1): the document holds it from
	// Committed on, whatever its as_of, so a read of it after the answer
	// sees it.
	InDocument bool `json:"in_document,omitempty"`
}

// New returns the Increment handler for counters in client's database.
func New(client *firestore.Client, cfg Config) *Handler {
	if cfg.MaxStep <= 0 {
		cfg.MaxStep = DefaultMaxStep
	}
	if cfg.PublicMaxStep <= 0 {
		cfg.PublicMaxStep = DefaultPublicMaxStep
	}
	if cfg.IdempotencyTTL <= 0 {
		cfg.IdempotencyTTL = DefaultIdempotencyTTL
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = DefaultMaxInFlight
	}
	maxStep := cfg.MaxStep
	if cfg.Public {
		maxStep = min(maxStep, cfg.PublicMaxStep)
	}
	l := core.MustParse(cfg.Layout)
	return &Handler{
		layout: l,
		writer: newShardWriter(client, adder.Config{
			Layout: l, DefaultShards: cfg.DefaultShards, CacheTTL: cfg.CacheTTL,
			AutoCreate: cfg.AutoCreate, CreatePattern: cfg.CounterPattern, Now: cfg.Now,
			InItself: inItself(cfg),
		}),
		cfg:     cfg,
		maxStep: maxStep,
		cors:    newCORS(cfg.CORSOrigins),
		log:     cfg.Logger,
		turns:   make(chan struct{}, cfg.MaxInFlight),
		users:   newUsers(),
	}
}

// inItself is adder.Config.InItself for cfg.
func inItself(cfg Config) time.Duration {
	if !cfg.InDocument {
		return 0
	}
	return cmp.Or(cfg.Spacing, fold.DefaultSpacing)
}

// ServeHTTP answers POST with one increment, GET ?rank= with a document's
// place (rank.go), GET ?board= with a page of a board (board.go), and
// OPTIONS with CORS.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.cors.handle(w, r) {
		return
	}
	if r.Method == http.MethodGet && r.URL.Query().Has("rank") {
		h.rankOf(w, r)
		return
	}
	if r.Method == http.MethodGet && r.URL.Query().Has("board") {
		h.boardPage(w, r)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "GET, POST, OPTIONS")
		httpjson.WriteError(w, httpjson.Refuse(http.StatusMethodNotAllowed, "method %s not allowed; use POST, or GET ?rank=collection/doc&field=f or ?board=collection&field=f", r.Method))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), h.cfg.Timeout)
	defer cancel()
	body, err := h.increment(ctx, w, r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(body)
}

// increment parses, checks and makes the increment, and returns the body
// of the answer.
func (h *Handler) increment(ctx context.Context, w http.ResponseWriter, r *http.Request) ([]byte, error) {
	a, err := h.admit(ctx, w, r)
	if err != nil {
		return nil, err
	}
	if a.uid != "" && (a.req.Vote != nil || a.req.Once != "" || a.limits.on()) {
		userDone, err := h.userTurn(ctx, a)
		if err != nil {
			return nil, err
		}
		defer userDone()
	}
	release, err := h.turn(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	if a.req.Vote == nil && a.req.Once == "" && a.key == "" && !a.limits.on() {
		shard, committed, err := h.writer.Add(ctx, a.req.Counter, a.count, a.req.By)
		if err != nil {
			return nil, plainError(err)
		}
		return encode(Response{Counter: a.req.Counter, Field: a.req.Field, Shard: shard, By: a.req.By, Changed: true,
			Committed: timestamp(committed), InDocument: shard == adder.InItself}), nil
	}
	return h.commit(ctx, a)
}

// admitted is a request that passed every check: what it asks, the count
// it asks of, the signed-in user ("" for none), its Idempotency-Key and
// the limits it is held to.
type admitted struct {
	req    Request
	count  core.Count
	uid    string
	key    string
	limits Limits
}

// limitedOn is what a's limits are kept per, for the user.
func (a admitted) limitedOn() string { return a.req.Counter + "\x00" + a.count.Field }

// admit checks the request's app, user, body and key, each refusal a
// clear error with nothing written.
func (h *Handler) admit(ctx context.Context, w http.ResponseWriter, r *http.Request) (admitted, error) {
	var a admitted
	if err := h.checkApp(r); err != nil {
		return a, err
	}
	var err error
	if a.uid, err = h.authenticate(ctx, r); err != nil {
		return a, err
	}
	if a.req, err = parseRequest(w, r, h.cfg.Public); err != nil {
		return a, err
	}
	if a.count, err = a.req.validate(h.layout, h.maxStep); err != nil {
		return a, err
	}
	if h.cfg.Public && h.cfg.VotesOnly && a.req.Vote == nil {
		return a, errorf(core.Invalid, `this Increment takes votes only: send {"counter": "...", "vote": true}, or false to take a vote back`)
	}
	if a.key, err = idempotencyKey(r); err != nil {
		return a, err
	}
	if a.req.Vote != nil && a.uid == "" {
		return a, errorf(core.Invalid, "a vote needs a signed-in user: this Increment does not verify ID tokens (TALLY_AUTH)")
	}
	if a.req.Once != "" && a.uid == "" {
		return a, errorf(core.Invalid, "once needs a signed-in user, counted once per %s: this Increment does not verify ID tokens (TALLY_AUTH)", a.req.Once)
	}
	if a.uid != "" && a.req.Vote == nil {
		a.limits = h.cfg.Limits
	}
	return a, nil
}

// userTurn waits for the user's turn: a transaction on the user's own
// documents, one at a time per user (see users), and none where a limit
// is known to refuse it (a request with a key may be a retry of one
// counted: it looks).
func (h *Handler) userTurn(ctx context.Context, a admitted) (done func(), err error) {
	userDone, err := h.users.wait(ctx, a.uid)
	if err != nil {
		return nil, err
	}
	if a.limits.on() && a.key == "" {
		if err := h.users.refused(a.uid, a.limitedOn(), time.Now()); err != nil {
			userDone()
			return nil, err
		}
	}
	return userDone, nil
}

// commit makes a as one commit (Writer.Commit): a vote, a step once per
// bucket, a step with a key or held to limits.
func (h *Handler) commit(ctx context.Context, a admitted) ([]byte, error) {
	req := a.req
	op := commitOp{Counter: req.Counter, Count: a.count, By: req.By, Voter: a.uid, Vote: req.Vote, TTL: h.cfg.IdempotencyTTL, Limits: a.limits}
	if req.Once != "" {
		op.Once, _ = calendar.ParseUnit(req.Once)
	}
	if a.key != "" {
		op.Key = scopedKey(a.uid, a.key)
		if h.layout.OnDocs() {
			op.Key = scopedKey(a.uid, a.count.Field+"\x00"+a.key) // one action per count
		}
	}
	body, committed, err := h.writer.Commit(ctx, op, func(shard int, changed bool) []byte {
		resp := Response{Counter: req.Counter, Field: req.Field, Shard: shard, By: req.By, Vote: req.Vote, Changed: changed,
			InDocument: changed && shard == adder.InItself}
		if !changed {
			resp.Shard, resp.By = -1, 0
		}
		return encode(resp)
	})
	if err != nil {
		if a.limits.on() {
			h.users.note(a.uid, a.limitedOn(), err, time.Now())
		}
		return nil, err
	}
	return stamped(body, committed), nil
}

// timestamp is a commit time as an answer gives it; "" for none.
func timestamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// stamped adds to the body of an answer that changed the count when its
// change committed. The body is built before the commit, as an
// Idempotency-Key's record keeps it for retries, so the time is added
// here: the first answer's from the commit, a retry's from the record.
func stamped(body []byte, committed time.Time) []byte {
	var r Response
	if committed.IsZero() || json.Unmarshal(body, &r) != nil || !r.Changed {
		return body
	}
	r.Committed = timestamp(committed)
	return encode(r)
}

// turn waits, at most QueueWait, until fewer than MaxInFlight requests are
// in flight, so that a slow Firestore does not pile requests up; past that
// it refuses the request before anything is written. release ends the turn.
func (h *Handler) turn(ctx context.Context) (release func(), err error) {
	t := time.NewTimer(QueueWait)
	defer t.Stop()
	select {
	case h.turns <- struct{}{}:
		return func() { <-h.turns }, nil
	case <-t.C:
	case <-ctx.Done():
	}
	return nil, errBusy
}

// fail logs server-side failures with their cause and answers the client.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	code, _, _ := httpjson.Answer(err)
	if code >= 500 {
		h.log.Error("increment failed", "error", err.Error(), "path", r.URL.Path)
	}
	httpjson.WriteError(w, err)
}
