package report

// Mode holds every figure for one mode. Rates are per second of load;
// durations are in milliseconds. A figure that does not apply to the mode,
// or an event that never came (a total never exact), is nil: null in JSON.
type Mode struct {
	Mode        string  `json:"mode"`
	Description string  `json:"description"`
	Seconds     float64 `json:"seconds"`
	Acked       int64   `json:"acked"`
	Errors      int64   `json:"errors"` // answers other than 200

	// Answers counts the answers by HTTP status ("none": no answer at all).
	// NonOKWritten is how many increments answered other than 200 were
	// written anyway; RefusedWritten, those of them that a refusal (429,
	// 503), which says nothing was written, accounts for: it must be 0.
	Answers        map[string]int64 `json:"answers"`
	NonOKWritten   int64            `json:"answered_not_200_but_written"`
	RefusedWritten int64            `json:"refused_but_written"`

	IncrPerSec    float64  `json:"increments_per_second"`
	RatioToRaw    *float64 `json:"ratio_to_raw"`
	LatencyP50    float64  `json:"latency_p50_ms"`
	LatencyP99    float64  `json:"latency_p99_ms"`
	HotDocPerS    float64  `json:"hottest_shard_writes_per_second"`
	ParentPerS    *float64 `json:"parent_writes_per_second"`
	ParentPeak    *int     `json:"parent_writes_peak_in_one_second"` // to any one parent
	ParentPeakAll *int     `json:"all_parents_writes_peak_in_one_second"`
	ParentTotal   *int     `json:"parent_writes"`
	ParentPerI    *float64 `json:"parent_writes_per_increment"`
	ParentGap     *float64 `json:"parent_writes_min_gap_ms"` // closest two writes to one parent

	LagP50    *float64 `json:"lag_p50_ms"`
	LagP99    *float64 `json:"lag_p99_ms"`
	Unreached *int     `json:"increments_never_in_total"`
	SettleLag *float64 `json:"last_increment_to_exact_ms"` // nil: never exact, or no rollup

	SettleWait    float64 `json:"settle_wait_ms"`       // how long the bench waited for the total after the load
	SettleBounded bool    `json:"settle_bound_reached"` // it stopped at the --settle bound

	Total    int64 `json:"total"`
	ShardSum int64 `json:"shard_sum"`
	Drift    int64 `json:"total_minus_acked"`

	ReadsPerIncr   float64 `json:"reads_per_increment"`
	WritesPerIncr  float64 `json:"writes_per_increment"` // deletes included
	DeletesPerIncr float64 `json:"deletes_per_increment"`
	FailedPerIncr  float64 `json:"failed_writes_per_increment"` // writes of failed commits; priced as writes
	// PerMillion is what a million increments cost at the run's prices:
	// Increment's and every Rollup instance's reads, writes and deletes,
	// and the writes of failed commits, priced as writes.
	PerMillion float64 `json:"usd_per_million_increments"`
	// Bill is the whole bill: PerMillion, and the functions' requests,
	// billable time and events, priced.
	Bill Bill `json:"bill"`
	// Transactions the clients in this process began per increment: for
	// tally and naive, Increment's (a plain increment needs none).
	IncrementTxPerIncr *float64 `json:"increment_transactions_per_increment"`
	// VerifiesPerIncr is the commits per increment that verified the
	// counted document (on documents: fsrpc.WithVerify); each is in
	// ReadsPerIncr too, priced as a read, as Firestore bills it.
	VerifiesPerIncr *float64 `json:"verifies_per_increment,omitempty"`
	// InDocumentShare is the share of acknowledged increments written
	// into their counted document itself (--in-document).
	InDocumentShare *float64 `json:"in_document_share,omitempty"`
	ReadsPerFold    *float64 `json:"rollup_reads_per_parent_write,omitempty"` // every Rollup instance's reads over the parent writes
	WritesPerFold   *float64 `json:"rollup_writes_per_parent_write,omitempty"`
	// Visible is the time from an increment's answer to a listener
	// seeing it in the total (with --listeners); ListenerReadsPerIncr is
	// what the listeners were billed, per increment.
	Visible              *Visible `json:"visible_latency"`
	ListenerReadsPerIncr *float64 `json:"listener_reads_per_increment"`

	DeliveryP50 *float64 `json:"event_delivery_p50_ms"` // shard commit to the bridge: the emulator's part of the lag
	DeliveryP99 *float64 `json:"event_delivery_p99_ms"`

	Events     *int64 `json:"events_received"`
	Duplicated *int64 `json:"events_duplicated"`
	Delayed    *int64 `json:"events_delayed"`

	HasRollup bool `json:"has_rollup"`

	// tally's Rollup instances: requests each took per second while the
	// load ran, and the most each held at once; InflightMax is the most of
	// any; Refused counts requests answered 429 for want of room.
	InstanceEventsPerSec []float64 `json:"events_per_second_per_instance"`
	InstanceInflightMax  []int     `json:"rollup_inflight_max_per_instance"`
	InflightMax          *int      `json:"rollup_inflight_max"`
	Refused              *int64    `json:"rollup_refused"`
	InstancePeakMiB      []float64 `json:"rollup_peak_rss_mib_per_instance"`
	InstancePeakHeapMiB  []float64 `json:"rollup_peak_heap_mib_per_instance"`

	// Hot spots, second by second from the start of the load: the most
	// writes any one shard took (for a single-document counter, its
	// document), and any one parent; the first second from which no shard
	// took more than SpreadLimit in any second (null: the last did); the
	// most shards any counter had at the end.
	HotShardSeries  []int    `json:"hottest_shard_writes_each_second"`
	HotParentSeries []int    `json:"hottest_parent_writes_each_second"`
	HotShardPeak    int      `json:"hottest_shard_writes_peak_in_one_second"`
	SpreadAfter     *float64 `json:"seconds_until_every_shard_at_most_10_a_second"`
	ShardsAtEnd     *int     `json:"num_shards_at_end"`

	IncrSeries   []int     `json:"increments_each_second"`
	ParentSeries []int     `json:"parent_writes_each_second"`
	LagSeries    []float64 `json:"lag_increments_each_100ms"` // acknowledged - total
}
