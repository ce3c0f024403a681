package report

// The modes, in the order they run.
const (
	ModeRaw   = "raw"   // client writes to random shards: the ceiling
	ModeTally = "tally" // Increment + tally's Rollup
	ModeNaive = "naive" // Increment + the guides' per-event rollup
	ModePlain = "plain" // the app's own increment of the counted field on its document: no shard, no function
)

// How shard events reach the rollups.
const (
	DeliveryEmulator = "emulator" // the emulator's own triggers, one event at a time
	DeliveryDirect   = "direct"   // posted by the bench from each commit, concurrently, as Eventarc does
)

// The modes of RunAggregate, in the order they run: three ways of keeping
// each post's count of its comments.
const (
	AggTally   = ModeTally // tally's Rollup folds comments=count(comments) onto each post from the comments' events
	AggTrigger = "trigger" // a per-event trigger adds +1 or -1 to the post for each comment created or deleted
	AggQuery   = "query"   // nothing is kept: each reader runs count() over the post's comments
)

// SpreadLimit is the most writes one document should take in any second:
// where the bench counts a counter as spread.
const SpreadLimit = 10

// MaxRequestsPerInstance is Cloud Run's highest concurrency: an instance
// holding this many requests answers 429, and the platform retries.
const MaxRequestsPerInstance = 1000
