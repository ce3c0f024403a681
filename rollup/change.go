// Package rollup keeps counters/{id}.total equal to the sum of the counter's
// shards, applying every shard change exactly once however often, late or out
// of order the platform delivers the shard's write events.
package rollup

import (
	"fmt"
	"time"
)

// Snapshot is one side of a shard write: the shard as it was before or after.
type Snapshot struct {
	Exists  bool
	Version time.Time // the document's update_time; zero when !Exists
	Count   int64     // the shard field; 0 when absent
}

// Change is one shard write, decoded from its event.
type Change struct {
	EventID string
	Counter string
	Shard   int
	Before  Snapshot
	After   Snapshot
}

// tombstoneGap separates a deleted shard's last version from the version the
// rollup records for its deletion. Firestore versions have microsecond
// precision, so the real deletion and any later re-creation are at least this
// far past the shard's last update.
const tombstoneGap = time.Microsecond

// version is the position of the change in its shard's history. A deletion
// carries no update_time of its own; it sits just past the version it deleted.
func (c Change) version() time.Time {
	if c.After.Exists {
		return c.After.Version
	}
	return c.Before.Version.Add(tombstoneGap)
}

func (c Change) String() string {
	return fmt.Sprintf("%s/%d %s->%s", c.Counter, c.Shard, c.Before, c.After)
}

func (s Snapshot) String() string {
	if !s.Exists {
		return "absent"
	}
	return fmt.Sprintf("%d@%s", s.Count, s.Version.Format(time.RFC3339Nano))
}
