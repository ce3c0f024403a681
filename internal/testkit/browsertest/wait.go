package browsertest

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/chromedp/chromedp"
)

// pollEvery is how often the waits below look at the page.
const pollEvery = 50 * time.Millisecond

// WaitJS waits until the JavaScript expression js is true in the page. It
// ends on the page's state or the context's end, never on a time of its
// own.
//
// It evaluates js in the page's current document each time, not in the
// execution context of the document a wait began in: chromedp tells an
// action that a navigation has loaded before it has taken in the new
// document's context, so a wait that holds a context right after a
// reload can be given the old one ("Cannot find context with specified
// id"). A page between two documents has none, and is not ready yet.
func WaitJS(js string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		var last error
		for {
			ok, err := chromedp.Evaluate[bool](`Boolean(`+js+`)`)(ctx, t)
			if err == nil && ok {
				return chromedp.Void{}, nil
			}
			if err != nil {
				last = err
			}
			select {
			case <-ctx.Done():
				return chromedp.Void{}, fmt.Errorf("waiting for %s: %w (the page's last answer: %v)", js, ctx.Err(), last)
			case <-time.After(pollEvery):
			}
		}
	}
}

// WaitText waits until the text of the element with this id is want.
func WaitText(id, want string) chromedp.Action[chromedp.Void] {
	return WaitJS(`document.getElementById(` + strconv.Quote(id) + `)?.textContent === ` + strconv.Quote(want))
}

// ClickJS clicks the element el (a JavaScript expression) from script,
// wherever the pointer is.
func ClickJS(el string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := chromedp.Evaluate[bool](el+`.click(), true`)(ctx, t)
		return chromedp.Void{}, err
	}
}
