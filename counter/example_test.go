package counter_test

import (
	"context"
	"fmt"
	"log"

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
		if err := c.Increment(ctx, "example-likes", 1); err != nil {
			log.Fatal(err)
		}
	}
	sum, err := c.Sum(ctx, "example-likes")
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
	if err := c.Increment(ctx, "example-views", 5); err != nil {
		log.Fatal(err)
	}
	// The total moves once the rollup has applied the increment.
	for total, err := range c.Watch(ctx, "example-views") {
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
