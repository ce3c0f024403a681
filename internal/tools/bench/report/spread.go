package report

// Spread is a distribution of durations, in milliseconds.
type Spread struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50_ms"`
	P90 float64 `json:"p90_ms"`
	P99 float64 `json:"p99_ms"`
	Max float64 `json:"max_ms"`
}

// Visible is what a user sees: the time from an increment's answer to a
// listener on its counter seeing it in the total, for every counter, the
// hot ones (more than one increment per fold spacing during the load) and the
// quiet ones.
type Visible struct {
	All           *Spread `json:"all"`
	Hot           *Spread `json:"hot"`
	Quiet         *Spread `json:"quiet"`
	HotCounters   int     `json:"hot_counters"`
	QuietCounters int     `json:"quiet_counters"` // counters that took at least one increment
	Unseen        int     `json:"increments_never_seen"`
}
