package emulatortest

import (
	"flag"
	"runtime"
	"strconv"
)

// WaitingTests is how many tests marked t.Parallel a test binary runs at
// once, unless -parallel says: tally's tests mostly wait (for emulators to
// start, folds a window away, browsers, boundaries of buckets), so more
// of them than CPUs run at once.
const WaitingTests = 8

// ManyAtOnce sets -parallel to WaitingTests (or the CPUs, if more), unless
// the command line gives it. TestMain calls it after flag.Parse.
func ManyAtOnce() {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		flag.Set("test.parallel", strconv.Itoa(max(WaitingTests, runtime.GOMAXPROCS(0))))
	}
}
