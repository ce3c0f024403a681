package report

import "fmt"

// FunctionPrices are what running tally's functions costs beside
// Firestore's operations, in US dollars: Cloud Run's request-based
// billing (functions of the 2nd generation are Cloud Run services) and
// Pub/Sub, which carries Eventarc's events.
type FunctionPrices struct {
	Request    float64 `json:"request_per_million"` // a million requests
	VCPUSecond float64 `json:"vcpu_second"`         // a vCPU allocated for a second of billable instance time
	GiBSecond  float64 `json:"gib_second"`          // a GiB of memory allocated for a second
	PubSubTiB  float64 `json:"pubsub_tib"`          // a TiB of messages published or delivered
	// Instance-based billing (BillingInstance): a vCPU and a GiB for a
	// second of an instance's life, with no fee a request.
	InstanceVCPUSecond float64 `json:"instance_vcpu_second"`
	InstanceGiBSecond  float64 `json:"instance_gib_second"`
}

// How an Increment instance is billed: by request (Cloud Run's default:
// while it holds a request, in 100 ms steps, and a fee a request), or by
// instance (its whole life, at a lower rate, and no fee a request).
const (
	BillingRequest  = "request"
	BillingInstance = "instance"
)

// CloudRunPrices are the list prices read on 2026-11-28: Cloud Run
// (cloud.google.com/run/pricing), request-based billing, Tier 1 regions:
// $0.40 per million requests, $0.000024 per vCPU-second and $0.0000025
// per GiB-second, past a monthly free tier of 2 million requests, 180,000
// vCPU-seconds and 360,000 GiB-seconds; instance-based billing, Tier 1:
// $0.000018 per vCPU-second and $0.000002 per GiB-second; Eventarc
// (cloud.google.com/eventarc/pricing): events from Google sources cost
// nothing themselves, and their Pub/Sub transport is billed at Pub/Sub's
// rates (cloud.google.com/pubsub/pricing): $40 per TiB published or
// delivered, at least 1,000 bytes a request, past 10 GiB a month.
var CloudRunPrices = FunctionPrices{Request: 0.40, VCPUSecond: 0.000024, GiBSecond: 0.0000025, PubSubTiB: 40,
	InstanceVCPUSecond: 0.000018, InstanceGiBSecond: 0.000002}

// Instance is the size deploy/deploy.sh gives Increment and Rollup: one
// vCPU and 256 MiB each. Increment may be given less (deploy.sh
// --increment-cpu), down to MinVCPU: then Cloud Run sends each instance
// one request at a time and bills it by request only.
var Instance = struct{ VCPU, GiB float64 }{VCPU: 1, GiB: 0.25}

// MinVCPU is the least vCPU Cloud Run gives an instance.
const MinVCPU = 0.08

// pubsubMinBytes is the least Pub/Sub bills a publish or a push for.
const pubsubMinBytes = 1000

func (p FunctionPrices) String() string {
	return fmt.Sprintf("$%g per million requests, $%g per vCPU-s, $%g per GiB-s (%g vCPU, %g GiB instances), $%g per TiB of events",
		p.Request, p.VCPUSecond, p.GiBSecond, Instance.VCPU, Instance.GiB, p.PubSubTiB)
}

// Bill is the whole bill of an increment: Firestore's operations, the
// functions' requests and billable time, and the events' transport. Per
// increment or per 1,000 increments as named; USD per million increments.
type Bill struct {
	IncrementRequests float64 `json:"increment_requests_per_increment"`
	RollupRequests    float64 `json:"rollup_requests_per_increment"` // every delivery, redeliveries included
	// Billable instance time: while an instance holds a request, each
	// such stretch rounded up to 100 ms; seconds per 1,000 increments.
	// With IncrementBilling BillingInstance, Increment's is its
	// instances' whole life.
	IncrementSeconds float64 `json:"increment_instance_seconds_per_1000"`
	IncrementBilling string  `json:"increment_billing,omitempty"`
	// IncrementVCPU: the vCPU Increment's time is priced at (0: Instance's);
	// IncrementCPUSeconds, IncrementThrottledSeconds: the CPU time its
	// instances used, and how long they were held back for their share,
	// per 1,000 increments, where measured (instances of less than one
	// vCPU, each a process of its own).
	IncrementVCPU             float64  `json:"increment_vcpu,omitempty"`
	IncrementCPUSeconds       *float64 `json:"increment_cpu_seconds_used_per_1000,omitempty"`
	IncrementThrottledSeconds *float64 `json:"increment_throttled_seconds_per_1000,omitempty"`
	RollupSeconds             float64  `json:"rollup_instance_seconds_per_1000"`
	// CPU time tally's Rollup processes used, per 1,000 increments (nil:
	// not measured, as for handlers in the bench's own process).
	RollupCPUSeconds *float64 `json:"rollup_cpu_seconds_used_per_1000"`
	EventBytes       float64  `json:"event_bytes_mean"` // of a delivered event's body

	Firestore float64 `json:"usd_firestore"`
	Requests  float64 `json:"usd_requests"`
	Compute   float64 `json:"usd_compute"`
	Events    float64 `json:"usd_events"`
	Total     float64 `json:"usd_total"`
}

// Price fills in b's dollars per million increments from its counts, and
// firestore, the price of its Firestore operations.
func (b *Bill) Price(p FunctionPrices, firestore float64) {
	const million = 1e6
	b.Firestore = firestore
	perSecond := Instance.VCPU*p.VCPUSecond + Instance.GiB*p.GiBSecond
	vcpu := Instance.VCPU
	if b.IncrementVCPU > 0 {
		vcpu = b.IncrementVCPU
	}
	incrementRequests, incrementPerSecond := b.IncrementRequests, vcpu*p.VCPUSecond+Instance.GiB*p.GiBSecond
	if b.IncrementBilling == BillingInstance {
		incrementRequests, incrementPerSecond = 0, vcpu*p.InstanceVCPUSecond+Instance.GiB*p.InstanceGiBSecond
	}
	b.Requests = (incrementRequests + b.RollupRequests) * p.Request
	b.Compute = (b.IncrementSeconds*incrementPerSecond + b.RollupSeconds*perSecond) / 1000 * million
	// Each event is published once and pushed once.
	b.Events = b.RollupRequests * million * 2 * max(b.EventBytes, pubsubMinBytes) / (1 << 40) * p.PubSubTiB
	b.Total = b.Firestore + b.Requests + b.Compute + b.Events
}
