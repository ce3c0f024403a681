package browsertest

import (
	"context"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// SetOffline puts the tab's network offline, or back online, as the
// browser's own offline mode does: navigator.onLine follows.
func SetOffline(t testing.TB, tab context.Context, off bool) {
	t.Helper()
	if _, err := chromedp.Call(tab, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	rules := []*network.Conditions{{Offline: off}}
	if _, err := chromedp.Call(tab, emulateByRule, byRule{Offline: off, MatchedNetworkConditions: rules}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(tab, network.OverrideNetworkState, network.OverrideNetworkStateParams{Offline: off, DownloadThroughput: -1, UploadThroughput: -1}); err != nil {
		t.Fatal(err)
	}
}

// byRule are the parameters of Network.emulateNetworkConditionsByRule as
// this Chromium takes them: offline is a parameter of its own.
type byRule struct {
	Offline                  bool                  `json:"offline"`
	MatchedNetworkConditions []*network.Conditions `json:"matchedNetworkConditions"`
}

var emulateByRule = cdp.Command[byRule, network.EmulateNetworkConditionsByRuleResult]{Method: network.CommandEmulateNetworkConditionsByRule}

// SetUnreachable makes the tab's requests to URLs matching pattern (the
// URLPattern syntax, absolute: *://*:*/Increment) fail as if the server
// could not be reached, or, with off false, go through again.
func SetUnreachable(t testing.TB, tab context.Context, pattern string, on bool) {
	t.Helper()
	if _, err := chromedp.Call(tab, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	var patterns []*network.BlockPattern
	if on {
		patterns = []*network.BlockPattern{{URLPattern: pattern, Block: true}}
	}
	if _, err := chromedp.Call(tab, network.SetBlockedURLs, network.SetBlockedURLsParams{URLPatterns: patterns}); err != nil {
		t.Fatal(err)
	}
}
