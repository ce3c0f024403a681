package report

import "fmt"

// Prices are Firestore's prices in US dollars per 100,000 operations, as
// its pricing page lists them.
type Prices struct {
	Read   float64 `json:"read"`
	Write  float64 `json:"write"`
	Delete float64 `json:"delete"`
}

// StandardPrices are the Standard edition's list prices in us-central1
// (Firestore pricing, 2026): $0.03 per 100,000 document reads, $0.09 per
// 100,000 writes and $0.01 per 100,000 deletes. Other locations differ.
var StandardPrices = Prices{Read: 0.03, Write: 0.09, Delete: 0.01}

// PerMillion is what a million increments cost at p, given the reads,
// writes (deletes not included) and deletes each one took.
func (p Prices) PerMillion(reads, writes, deletes float64) float64 {
	return 10 * (reads*p.Read + writes*p.Write + deletes*p.Delete)
}

func (p Prices) String() string {
	return fmt.Sprintf("$%g/$%g/$%g per 100k reads/writes/deletes", p.Read, p.Write, p.Delete)
}
