package counter_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/counter"
)

func Example() {
	ctx := context.Background()
	// With FIRESTORE_EMULATOR_HOST set, this is the emulator; otherwise the
	// project's database, with application default credentials.
	fs, err := firestore.NewClient(ctx, "demo-tally-test")
	if err != nil {
		log.Fatal(err)
	}
	defer fs.Close()
	c := counter.New(fs, counter.Options{})

	if err := c.Create(ctx, "example-likes", 4); err != nil {
		log.Fatal(err)
	}
	defer c.Delete(ctx, "example-likes")
	for range 3 {
		if err := c.Add(ctx, "example-likes", "", 1); err != nil {
			log.Fatal(err)
		}
	}
	sum, err := c.Sum(ctx, "example-likes", "")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(sum)
	// Output: 3
}

func ExampleClient_Watch() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fs, err := firestore.NewClient(ctx, "demo-tally-test")
	if err != nil {
		log.Fatal(err)
	}
	defer fs.Close()
	c := counter.New(fs, counter.Options{})
	if err := c.Create(ctx, "example-views", 2); err != nil {
		log.Fatal(err)
	}
	defer c.Delete(context.Background(), "example-views")
	if err := c.Add(ctx, "example-views", "", 5); err != nil {
		log.Fatal(err)
	}
	// The total moves once the rollup has applied the increment.
	for total, err := range c.Watch(ctx, "example-views", "") {
		if err != nil {
			log.Fatal(err)
		}
		if total == 5 {
			fmt.Println("total", total)
			break
		}
	}
	// Output: total 5
}

// ExampleClient_lifecycle is the README's tour of the client.
func ExampleClient_lifecycle() {
	ctx := context.Background()
	fs, err := firestore.NewClient(ctx, "demo-tally-test")
	if err != nil {
		log.Fatal(err)
	}
	defer fs.Close()
	c := counter.New(fs, counter.Options{ShardCacheTTL: 300 * time.Millisecond}) // the deployed TALLY_SHARD_CACHE_TTL
	// The parent {num_shards: 4, total: 0}, and 4 shards at 0.
	if err := c.Create(ctx, "example-posts", 4); err != nil {
		log.Fatal(err)
	}
	for range 5 {
		c.Add(ctx, "example-posts", "", 1) // the one shard write Increment makes
	}
	sum, _ := c.Sum(ctx, "example-posts", "")         // strongly consistent: sum() over the shards
	old, _ := c.Reshard(ctx, "example-posts", 2, nil) // its value never changes
	d, _ := c.Reconcile(ctx, "example-posts")         // a fold now: total = sum; d[0].Drift = total before - sum
	total, _ := c.Get(ctx, "example-posts", "")       // one document read
	fmt.Println(sum, old, d[0].Sum, total)
	if err := c.Reset(ctx, "example-posts"); err != nil { // shards to 0, then a fold
		log.Fatal(err)
	}
	if err := c.Delete(ctx, "example-posts"); err != nil { // shards, votes, keys, then the parent
		log.Fatal(err)
	}
	// Output: 5 4 5 5
}

// ExampleLayoutFromEnv counts on the app's own documents: the Client is
// told the Layout the functions were, from the same settings.
func ExampleLayoutFromEnv() {
	ctx := context.Background()
	fs, err := firestore.NewClient(ctx, "demo-tally-test")
	if err != nil {
		log.Fatal(err)
	}
	defer fs.Close()
	settings := map[string]string{"TALLY_COUNTS": "example_posts:likes,views"} // os.Getenv beside the functions
	layout, err := counter.LayoutFromEnv(func(k string) string { return settings[k] })
	if err != nil {
		log.Fatal(err)
	}
	c := counter.New(fs, counter.Options{Layout: layout})

	post := fs.Doc("example_posts/p1")
	if _, err := post.Set(ctx, map[string]any{"title": "Hello"}); err != nil { // the app's document
		log.Fatal(err)
	}
	defer post.Delete(ctx)
	defer c.Delete(ctx, "example_posts/p1") // tally's documents under it
	for range 2 {
		if err := c.Add(ctx, "example_posts/p1", "likes", 1); err != nil {
			log.Fatal(err)
		}
	}
	likes, err := c.Sum(ctx, "example_posts/p1", "likes") // strongly consistent: the shards' sum
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.OnDocuments(), likes)
	// Output: true 2
}
