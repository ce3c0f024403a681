package browsertest

import (
	"context"
	"strconv"
	"time"

	"github.com/chromedp/chromedp"
)

// pollEvery is how often the waits below look at the page.
const pollEvery = 50 * time.Millisecond

// WaitJS waits until the JavaScript expression js is true in the page. It
// ends on the page's state or the context's end, never on a time of its
// own.
func WaitJS(js string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := chromedp.Poll[bool](js, chromedp.WithPollingInterval(pollEvery))(ctx, t)
		return chromedp.Void{}, err
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
