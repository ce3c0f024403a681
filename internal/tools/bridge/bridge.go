// Package bridge carries the Firestore emulator's trigger events to a
// CloudEvent function the way Eventarc does in production: the raw protobuf
// body, every ce-* attribute, concurrent delivery, retries with backoff
// when the function answers with an error (not when it refuses the event,
// with a 4xx), and no event past Eventarc's size limit.
package bridge

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Options configures a Bridge. Zero fields take the defaults in New.
type Options struct {
	Target      string        // URL of the CloudEvent function, e.g. http://127.0.0.1:8080/Rollup
	Client      *http.Client  // default: RequestTimeout, connections kept for MaxInFlight
	Logger      *slog.Logger  // nil discards
	MaxAttempts int           // deliveries of one event before it is dropped; default 20
	MinBackoff  time.Duration // first retry delay; default 100ms
	MaxBackoff  time.Duration // retry delay cap; default 5s
	MaxInFlight int           // concurrent deliveries; default 1000, Cloud Run's highest concurrency
	// MaxEventBytes is the largest event Eventarc delivers (its
	// protobuf); a larger one is refused, as Eventarc would not deliver
	// it. Default DefaultMaxEventBytes.
	MaxEventBytes int
	Faults        Faults // injected for tests and benchmarks

	// OnReceive, if set, sees each event's raw body as it arrives.
	OnReceive func(body []byte, at time.Time)

	// Secret, if set, is known only to the bridge, the function and the
	// emulator its triggers were registered with: the bridge takes an
	// event only at a trigger's path that holds it (TriggerPath), and
	// sends it to the function with SecretHeader, so that a process of
	// the machine that does not know it can forge no event, as in
	// production only the trigger's account may call Rollup.
	Secret string
}

// SecretHeader carries Options.Secret on each delivery.
const SecretHeader = "X-Tally-Bridge-Secret"

// TriggerKey is the id of a trigger registered to deliver to a bridge
// with the given secret: name, and the secret, which the emulator then
// puts in the path of each event it posts.
func TriggerKey(name, secret string) string {
	if secret == "" {
		return name
	}
	return name + "-" + secret
}

// Signed reports whether r carries secret in SecretHeader: a delivery of
// a bridge with that secret.
func Signed(r *http.Request, secret string) bool {
	return subtle.ConstantTimeCompare([]byte(r.Header.Get(SecretHeader)), []byte(secret)) == 1
}

// Faults makes delivery worse on purpose, as the platform may: duplicates and
// reordering. Rates are fractions of events in [0, 1], spread evenly from
// a random start (see share): of any n events in a row, at least
// ⌊n·rate⌋ are duplicated, and of any n copies, at least ⌊n·rate⌋
// delayed, however few events a run has.
type Faults struct {
	DuplicateRate float64       // delivered twice
	DelayRate     float64       // held back up to MaxDelay, so later events overtake them
	MaxDelay      time.Duration // default 2s
}

// Stats counts what the bridge did.
type Stats struct {
	Received   int64 // events from the emulator
	Deliveries int64 // attempts, duplicates included
	Failures   int64 // attempts the function answered with an error
	Dropped    int64 // events given up: after MaxAttempts, or refused by the function (a 4xx)
	Refused    int64 // events over MaxEventBytes, refused at once
	Duplicated int64 // extra copies injected
	Delayed    int64 // events held back
}

// DefaultMaxEventBytes is the largest event Eventarc delivers: 512 KiB,
// as the Rollup function takes (rollup.MaxEventBytes).
const DefaultMaxEventBytes = 512 << 10

// RequestTimeout bounds one delivery, as the deployed function's timeout
// (60 s) bounds a request in production, and a little more: the function
// answers before it, so the bridge never cuts a request short.
const RequestTimeout = 65 * time.Second

// Bridge is an http.Handler for the emulator's --functions_emulator address.
type Bridge struct {
	o       Options
	sem     chan struct{}
	pending atomic.Int64             // deliveries not yet finished
	targets atomic.Pointer[[]string] // if set, each delivery goes to a random one of these instead of o.Target

	received, deliveries, failures, dropped, duplicated, delayed, refused atomic.Int64
	duplicate, delay                                                      *share
}

// share picks a share of the calls to next: each adds rate to a debt that
// starts at random in [0, 1), and a call that takes it to 1 or more is
// picked, and pays 1. Of any n calls in a row, at least ⌊n·rate⌋ are
// picked, and at most ⌈n·rate⌉.
type share struct {
	mu   sync.Mutex
	rate float64
	debt float64
}

func newShare(rate float64) *share { return &share{rate: rate, debt: rand.Float64()} }

func (s *share) next() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.debt += s.rate
	if s.debt < 1 {
		return false
	}
	s.debt--
	return true
}

// New returns a bridge delivering to o.Target.
func New(o Options) *Bridge {
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = 1000
	}
	if o.Client == nil {
		// The function holds each event until a fold covers it, so
		// deliveries overlap: keep a connection for each.
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = o.MaxInFlight
		o.Client = &http.Client{Timeout: RequestTimeout, Transport: t}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 20
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = 100 * time.Millisecond
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 5 * time.Second
	}
	if o.Faults.MaxDelay <= 0 {
		o.Faults.MaxDelay = 2 * time.Second
	}
	if o.MaxEventBytes <= 0 {
		o.MaxEventBytes = DefaultMaxEventBytes
	}
	return &Bridge{o: o, sem: make(chan struct{}, o.MaxInFlight),
		duplicate: newShare(o.Faults.DuplicateRate), delay: newShare(o.Faults.DelayRate)}
}

// event is one delivery's request, detached from the emulator's.
type event struct {
	id     string
	header http.Header
	body   []byte
}

// ServeHTTP takes an event from the emulator and answers at once: the
// emulator sends one event at a time and would otherwise wait on the function.
func (b *Bridge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	if b.o.Secret != "" && !strings.Contains(path.Base(r.URL.Path), "-"+b.o.Secret) {
		b.o.Logger.Warn("bridge: refusing an event at a path no trigger of its emulator posts to", "path", r.URL.Path)
		http.Error(w, "no trigger of this bridge's emulator is registered at this path", http.StatusNotFound)
		return
	}
	// The emulator sends the protobuf in base64: a third more bytes.
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, int64(base64.StdEncoding.EncodedLen(b.o.MaxEventBytes))+2))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
	case err != nil:
		http.Error(w, "reading body failed", http.StatusBadRequest)
		return
	}
	body := DecodeBody(raw)
	if tooBig != nil || len(body) > b.o.MaxEventBytes {
		b.refused.Add(1)
		b.o.Logger.Error("bridge: refusing an event over Eventarc's limit, which it would not deliver", "event_id", r.Header.Get("ce-id"),
			"subject", r.Header.Get("ce-subject"), "limit_bytes", b.o.MaxEventBytes)
		http.Error(w, "an event is at most 512 KiB", http.StatusRequestEntityTooLarge)
		return
	}
	w.WriteHeader(http.StatusNoContent)
	b.Send(r.Header, body)
}

// Send delivers one event, given as its binary-mode headers and raw body, as
// if the emulator had posted it: with the faults, concurrently and with
// retries.
func (b *Bridge) Send(header http.Header, body []byte) {
	e := event{id: header.Get("ce-id"), header: ceHeaders(header), body: body}
	b.received.Add(1)
	if b.o.OnReceive != nil {
		b.o.OnReceive(e.body, time.Now())
	}
	copies := 1
	if b.duplicate.next() {
		copies = 2
		b.duplicated.Add(1)
	}
	for i := 0; i < copies; i++ {
		var delay time.Duration
		if b.delay.next() {
			delay = rand.N(b.o.Faults.MaxDelay)
			b.delayed.Add(1)
		}
		b.pending.Add(1)
		go b.deliver(e, delay)
	}
}

// ceHeaders keeps the CloudEvent attributes and the content type. The
// emulator's ce-datacontenttype is dropped: the binary binding carries it in
// Content-Type only, and the functions framework rejects both at once.
func ceHeaders(in http.Header) http.Header {
	out := http.Header{}
	for k, v := range in {
		lk := strings.ToLower(k)
		if strings.HasPrefix(lk, "ce-") && lk != "ce-datacontenttype" {
			out[k] = v
		}
	}
	ct := in.Get("Content-Type")
	if ct == "" {
		ct = in.Get("ce-datacontenttype")
	}
	out.Set("Content-Type", ct)
	return out
}

// DecodeBody undoes the emulator's base64 encoding of an event's protobuf;
// a body that is not base64 (as production sends) is returned as it is.
func DecodeBody(raw []byte) []byte {
	trimmed := bytes.TrimSpace(raw)
	dec := make([]byte, base64.StdEncoding.DecodedLen(len(trimmed)))
	n, err := base64.StdEncoding.Decode(dec, trimmed)
	if err != nil {
		return raw
	}
	return dec[:n]
}

// deliver posts e to the target until it succeeds or MaxAttempts is reached,
// waiting with capped exponential backoff and jitter in between.
func (b *Bridge) deliver(e event, delay time.Duration) {
	defer b.pending.Add(-1)
	time.Sleep(delay)
	backoff := b.o.MinBackoff
	for attempt := 1; ; attempt++ {
		status, err := b.post(e)
		if err == nil && status/100 == 2 {
			return
		}
		b.failures.Add(1)
		if err == nil && final(status) {
			// The function refused the event itself: no retry changes that.
			b.dropped.Add(1)
			b.o.Logger.Error("bridge: dropping event: the function refused it", "event_id", e.id, "status", status)
			return
		}
		if attempt == b.o.MaxAttempts {
			b.dropped.Add(1)
			b.o.Logger.Error("bridge: dropping event", "event_id", e.id, "attempts", attempt, "status", status, "error", errString(err))
			return
		}
		b.o.Logger.Warn("bridge: retrying event", "event_id", e.id, "attempt", attempt, "status", status, "error", errString(err))
		time.Sleep(backoff/2 + rand.N(backoff/2+1))
		backoff = min(2*backoff, b.o.MaxBackoff)
	}
}

// final reports whether a function's answer refuses an event for good, so
// that it is not sent again: a 4xx, but for a timeout (408) and too many
// requests (429), which a retry may get past.
func final(status int) bool {
	return status/100 == 4 && status != http.StatusRequestTimeout && status != http.StatusTooManyRequests
}

func (b *Bridge) post(e event) (int, error) {
	b.sem <- struct{}{}
	defer func() { <-b.sem }()
	b.deliveries.Add(1)
	target := b.o.Target
	if ts := b.targets.Load(); ts != nil && len(*ts) > 0 {
		target = (*ts)[rand.IntN(len(*ts))]
	}
	req, err := http.NewRequest(http.MethodPost, target, bytes.NewReader(e.body))
	if err != nil {
		return 0, err
	}
	req.Header = e.header.Clone()
	if b.o.Secret != "" {
		req.Header.Set(SecretHeader, b.o.Secret)
	}
	resp, err := b.o.Client.Do(req)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// Secret is the bridge's Options.Secret.
func (b *Bridge) Secret() string { return b.o.Secret }

// SetTargets spreads the deliveries from now on over urls, each to a random
// one, as the platform spreads events over a function's instances.
func (b *Bridge) SetTargets(urls []string) {
	b.targets.Store(&urls)
}

// Wait blocks until every event received so far is delivered or dropped, or
// ctx ends.
func (b *Bridge) Wait(ctx context.Context) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !b.Idle() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	return nil
}

// Idle reports whether every event received so far is delivered or dropped.
func (b *Bridge) Idle() bool { return b.pending.Load() == 0 }

// Pending is how many deliveries are not finished: events not yet
// answered, duplicates included.
func (b *Bridge) Pending() int64 { return b.pending.Load() }

// Stats returns the counts so far.
func (b *Bridge) Stats() Stats {
	return Stats{
		Received: b.received.Load(), Deliveries: b.deliveries.Load(), Failures: b.failures.Load(),
		Dropped: b.dropped.Load(), Duplicated: b.duplicated.Load(), Delayed: b.delayed.Load(), Refused: b.refused.Load(),
	}
}
