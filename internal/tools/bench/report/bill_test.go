package report

import (
	"math"
	"testing"
)

// TestBillByInstance: with Increment billed by instance, its requests pay
// no fee and its instances' time is priced at the instance-based rate;
// Rollup's stays billed by request.
func TestBillByInstance(t *testing.T) {
	counts := Bill{IncrementRequests: 1, RollupRequests: 0.5, IncrementSeconds: 20, RollupSeconds: 5, EventBytes: 250}
	byRequest, byInstance := counts, counts
	byInstance.IncrementBilling = BillingInstance
	byRequest.Price(CloudRunPrices, 1)
	byInstance.Price(CloudRunPrices, 1)
	perRequestSecond := Instance.VCPU*CloudRunPrices.VCPUSecond + Instance.GiB*CloudRunPrices.GiBSecond
	perInstanceSecond := Instance.VCPU*CloudRunPrices.InstanceVCPUSecond + Instance.GiB*CloudRunPrices.InstanceGiBSecond
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if !near(byRequest.Requests, 1.5*0.40) || !near(byInstance.Requests, 0.5*0.40) {
		t.Errorf("requests: by request $%g, by instance $%g; want $0.60 and $0.20 (Rollup's alone)", byRequest.Requests, byInstance.Requests)
	}
	if want := (20*perRequestSecond + 5*perRequestSecond) * 1000; !near(byRequest.Compute, want) {
		t.Errorf("compute by request $%g, want $%g", byRequest.Compute, want)
	}
	if want := (20*perInstanceSecond + 5*perRequestSecond) * 1000; !near(byInstance.Compute, want) {
		t.Errorf("compute by instance $%g, want $%g", byInstance.Compute, want)
	}
	if !near(byInstance.Total, byInstance.Firestore+byInstance.Requests+byInstance.Compute+byInstance.Events) {
		t.Errorf("total $%g is not the sum of its parts %+v", byInstance.Total, byInstance)
	}
}

// TestBillSmallIncrement: Increment's time is priced at its own vCPU, and
// Rollup's at the instance's full one.
func TestBillSmallIncrement(t *testing.T) {
	b := Bill{IncrementRequests: 1, RollupRequests: 0.5, IncrementSeconds: 100, RollupSeconds: 5, IncrementVCPU: 0.167}
	b.Price(CloudRunPrices, 1)
	p := CloudRunPrices
	want := (100*(0.167*p.VCPUSecond+Instance.GiB*p.GiBSecond) + 5*(Instance.VCPU*p.VCPUSecond+Instance.GiB*p.GiBSecond)) * 1000
	if math.Abs(b.Compute-want) > 1e-9 {
		t.Errorf("compute $%g, want $%g", b.Compute, want)
	}
	if math.Abs(b.Requests-1.5*p.Request) > 1e-9 {
		t.Errorf("requests $%g, want $%g: each request pays its fee", b.Requests, 1.5*p.Request)
	}
}
