// Package firebase pins the Firebase CLI whose Auth emulator tally's
// sign-in tests and local stack run: package.json and package-lock.json
// here, which a tally binary carries, so that one built and run outside
// the repository installs the same version, once per machine.
package firebase

import (
	"embed"
	"encoding/json"
	"strconv"
	"strings"
)

// Pins are package.json and package-lock.json.
//
//go:embed package.json package-lock.json
var Pins embed.FS

// NodeMajor is the oldest Node.js major version the pinned CLI runs on:
// the lowest ">=N" of firebase-tools' engines.node in the lockfile (0 if
// it names none). The CLI exits at once on an older Node.js.
func NodeMajor() int {
	b, err := Pins.ReadFile("package-lock.json")
	if err != nil {
		return 0
	}
	var lock struct {
		Packages map[string]struct {
			Engines struct {
				Node string `json:"node"`
			} `json:"engines"`
		} `json:"packages"`
	}
	if json.Unmarshal(b, &lock) != nil {
		return 0
	}
	return lowestMajor(lock.Packages["node_modules/firebase-tools"].Engines.Node)
}

// lowestMajor reads the lowest major version of a range such as
// ">=20.0.0 || >=22.0.0".
func lowestMajor(r string) int {
	low := 0
	for _, alt := range strings.Split(r, "||") {
		v, ok := strings.CutPrefix(strings.TrimSpace(alt), ">=")
		if !ok {
			continue
		}
		major, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimSpace(v), "v"), ".")
		if n, err := strconv.Atoi(major); err == nil && (low == 0 || n < low) {
			low = n
		}
	}
	return low
}
