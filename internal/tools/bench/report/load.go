// Package report is the bench's figures: the reports its runners fill
// (Load for bench.Run, Aggregate, Windows and Soak), and what a reader
// gets of them: tables, JSON, charts, and the prices they are reckoned
// at. It measures nothing: the runners do (package bench). The names of
// the modes and of the deliveries a report records are defined here
// (names.go).
package report

import "time"

// Load is every figure of one bench.Run: the modes side by side under one load.
type Load struct {
	Started time.Time `json:"started"`
	Options Options   `json:"options"`
	Modes   []Mode    `json:"modes"`
}

// Options is the part of a runner's options a report records.
type Options struct {
	Counters   int     `json:"counters"`
	Fields     int     `json:"fields,omitempty"`
	Timed      bool    `json:"timed,omitempty"` // the fields' windows and trend (bench's timedCounts)
	Shards     int     `json:"shards"`          // 0: new counters, which grow
	Burst      bool    `json:"burst,omitempty"`
	Contention float64 `json:"contention_writes_per_second,omitempty"`
	Feed       bool    `json:"feed_listener,omitempty"`
	Workers    int     `json:"workers"`
	Rate       float64 `json:"rate"`
	Popularity string  `json:"popularity"`
	RestMS     float64 `json:"rest_ms"`
	Listeners  bool    `json:"listeners"`
	Seconds    float64 `json:"seconds"`
	WindowMS   float64 `json:"window_ms"`
	Instances  int     `json:"rollup_instances"`
	// IncrementInstances: each mode's Increment instances
	IncrementInstances int `json:"increment_instances"`
	// ClientWrites: tally's mode wrote its shards from the client, with
	// no Increment.
	ClientWrites bool `json:"client_writes,omitempty"`
	// Keys: each increment through Increment carried an Idempotency-Key.
	Keys bool `json:"keys,omitempty"`
	// InDocument: tally's Increment wrote a quiet document's increments
	// into it; IncrementBilling: how its instances were priced
	// (BillingRequest or BillingInstance).
	InDocument       bool   `json:"in_document,omitempty"`
	IncrementBilling string `json:"increment_billing,omitempty"`
	// IncrementCPU: the vCPU of tally's Increment instances; below one,
	// each took one request at a time, confined to that share of a CPU.
	IncrementCPU  float64 `json:"increment_vcpu,omitempty"`
	Delivery      string  `json:"delivery"`
	SettleSeconds float64 `json:"settle_bound_seconds"`
	DuplicateRate float64 `json:"duplicate_rate"`
	DelayRate     float64 `json:"delay_rate"`
	MaxDelayMS    float64 `json:"max_delay_ms"`
	Prices        Prices  `json:"usd_per_100k"`
	// FunctionPrices: what the functions' requests, time and events are
	// priced at (Mode.Bill).
	FunctionPrices FunctionPrices `json:"function_prices"`
	URL            string         `json:"url,omitempty"`
	Aggregate      bool           `json:"aggregate,omitempty"`
	Windows        bool           `json:"windows,omitempty"`
	Existing       int            `json:"existing,omitempty"` // with Aggregate: comments a post had before the load
}
