// Package deploy holds what tally's deployment needs beyond deploy.sh: the
// Firestore security rules, rendered for a configuration.
package deploy

import (
	_ "embed"
	"fmt"
	"strings"

	"github.com/tallycounters/tally/internal/core"
)

//go:embed firestore.rules
var rulesSource string

// RulesOptions says how to render the rules.
type RulesOptions struct {
	Collection    string // default "counters"
	SignedInReads bool   // only signed-in users may read counters
}

// Rules renders firestore.rules for o.
func Rules(o RulesOptions) (string, error) {
	src := rulesSource
	if o.Collection != "" && o.Collection != core.DefaultCollection {
		if err := core.ValidName(o.Collection); err != nil {
			return "", fmt.Errorf("deploy: collection %q: %w", o.Collection, err)
		}
		src = replaceOnce(src, "match /counters/{counterId}", "match /"+o.Collection+"/{counterId}")
	}
	if o.SignedInReads {
		src = replaceOnce(src, "allow read: if true;", "allow read: if request.auth != null;")
	}
	return src, nil
}

func replaceOnce(s, old, new string) string {
	if strings.Count(s, old) != 1 {
		panic(fmt.Sprintf("deploy: firestore.rules must hold %q exactly once", old)) // the embedded file is ours
	}
	return strings.Replace(s, old, new, 1)
}
