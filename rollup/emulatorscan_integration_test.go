package rollup

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/fold"
)

// BenchmarkFoldAmongOthers times a reconcile of a post of 2 comments (a
// read of the post, one part's count() and a write) while the database
// holds TALLY_BENCH_OTHERS comments of other posts, 2 to a post (a list,
// made as it goes; default 0,1000, so that CI's one run of each benchmark
// is quick). Firestore reads a part's index
// entries only, whatever else the database holds; the emulator scans
// every document of the collection id, so its folds slow with the
// database, which is what bench --aggregate measures on it at 10,001
// posts. Run it alone (-run '^$'): comments of other tests count too.
func BenchmarkFoldAmongOthers(b *testing.B) {
	ctx := context.Background()
	client, l, name := newPost(b, "posts:comments=count(comments)")
	createChildren(b, client, client.Doc(name).Collection("comments"), 2)
	folder := fold.NewFolder(client, l, time.Millisecond)
	made := 0
	sizes := cmpOr(os.Getenv("TALLY_BENCH_OTHERS"), "0,1000")
	for _, size := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(size)
		if err != nil {
			b.Fatalf("TALLY_BENCH_OTHERS=%s: %v", sizes, err)
		}
		var jobs []*firestore.BulkWriterJob
		bw := client.BulkWriter(ctx)
		for ; made < n; made++ {
			ref := client.Doc(fmt.Sprintf("%s-other-%d/comments/c%d", name, made/2, made%2))
			job, err := bw.Create(ref, map[string]any{"text": "old"})
			if err != nil {
				b.Fatal(err)
			}
			jobs = append(jobs, job)
		}
		bw.End()
		for _, job := range jobs {
			if _, err := job.Results(); err != nil {
				b.Fatal(err)
			}
		}
		b.Run("others="+size, func(b *testing.B) {
			for b.Loop() {
				if _, err := folder.Reconcile(ctx, name); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
