// Package firebase pins the Firebase CLI whose Auth emulator tally's
// sign-in tests and local stack run: package.json and package-lock.json
// here, which a tally binary carries, so that one built and run outside
// the repository installs the same version, once per machine.
package firebase

import "embed"

// Pins are package.json and package-lock.json.
//
//go:embed package.json package-lock.json
var Pins embed.FS
