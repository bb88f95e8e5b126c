package console_test

// The browser the console's tests drive: Debian's chromium (installed by
// `make bootstrap`), headless, with a fresh profile, through
// github.com/chromedp/chromedp (v0.23), the maintained Go client of the
// Chrome DevTools Protocol: it needs no driver binary and gives typed
// protocol events (dialogs, exceptions, console and log entries) and the
// accessibility tree, which the tests check.

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/hookrelay/hookrelay/testenv"
)

// chrome is one headless Chromium tab on the test's server.
type chrome struct {
	t    *testing.T
	ctx  context.Context
	base string
	n    int // steps run, numbering screenshots

	mu       sync.Mutex
	problems []string // dialogs, exceptions, console and log errors
}

// newChrome starts Chromium for the test. Every host name resolves to
// nothing and every address but loopback goes to a closed proxy: the
// browser talks to the test's servers only.
func newChrome(t *testing.T, base string) *chrome {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(testenv.Tool(t, "chromium")),
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"),
		chromedp.Flag("proxy-server", "http://127.0.0.1:9"), chromedp.WindowSize(1280, 900))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	c := &chrome{t: t, ctx: ctx, base: base}
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	c.watch()
	return c
}

// watch records every dialog (and dismisses it), uncaught exception, and
// console or log error of the tab.
func (c *chrome) watch() {
	dialogs := chromedp.Events(c.ctx, page.JavascriptDialogOpening)
	exceptions := chromedp.Events(c.ctx, runtime.ExceptionThrown)
	calls := chromedp.Events(c.ctx, runtime.ConsoleAPICalled)
	logs := chromedp.Events(c.ctx, log.EntryAdded)
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			c.problem("dialog: " + ev.Message)
			_, _ = chromedp.Call(c.ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{})
		}
	}()
	go drain(exceptions, func(ev runtime.EventExceptionThrown) {
		c.problem("exception: " + ev.ExceptionDetails.Text)
	})
	go drain(calls, func(ev runtime.EventConsoleAPICalled) {
		if ev.Type == runtime.ConsoleAPICalledTypeError {
			c.problem("console.error")
		}
	})
	go drain(logs, func(ev log.EventEntryAdded) {
		if ev.Entry.Level == log.EntryLevelError {
			c.problem("log: " + ev.Entry.Text + " " + ev.Entry.URL)
		}
	})
}

// drain calls f on every event until the tab closes.
func drain[E any](events iter.Seq2[E, error], f func(E)) {
	for ev, err := range events {
		if err != nil {
			return
		}
		f(ev)
	}
}

func (c *chrome) problem(p string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.problems = append(c.problems, p)
}

// seen returns the problems recorded since the mark (a count of them).
func (c *chrome) seen(mark int) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.problems[mark:]...)
}

func (c *chrome) mark() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.problems)
}

// step runs the actions within a minute; a failure fails the test with a
// screenshot of the page in the folder it names.
func (c *chrome) step(name string, actions ...chromedp.Action[chromedp.Void]) {
	c.t.Helper()
	c.n++
	ctx, cancel := context.WithTimeout(c.ctx, time.Minute)
	defer cancel()
	start := time.Now()
	if err := chromedp.Do(ctx, actions...); err != nil {
		c.t.Fatalf("step %d %q after %s: %v (%s)", c.n, name, time.Since(start).Round(time.Millisecond), err, c.screenshot(name))
	}
}

// screenshot saves the page for a failed step in HOOKRELAY_CONSOLE_SHOTS,
// or a new folder of the system's temporary one, and says where.
func (c *chrome) screenshot(name string) string {
	dir := os.Getenv("HOOKRELAY_CONSOLE_SHOTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "hookrelay-console-shots")
	}
	png, err := chromedp.Run(c.ctx, chromedp.FullScreenshot(100))
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	file := filepath.Join(dir, fmt.Sprintf("%s-%02d-%s.png", c.t.Name(), c.n, unsafeName.ReplaceAllString(name, "-")))
	if err == nil {
		err = os.WriteFile(file, png, 0o644)
	}
	if err != nil {
		return "no screenshot: " + err.Error()
	}
	return "screenshot: " + file
}

// unsafeName is what a screenshot's file name leaves out of a step's name.
var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._]+`)

// open goes to the console's path and waits for the page.
func (c *chrome) open(path string) {
	c.t.Helper()
	c.step("open "+path, chromedp.Navigate(c.base+path), chromedp.WaitReady(chromedp.CSS("main")))
}

// submit clicks the button sel, which sends its form, and waits for the
// page that follows to load.
func (c *chrome) submit(name, sel string) {
	c.t.Helper()
	load := chromedp.WaitEvent(page.LoadEventFired, nil, chromedp.Click(chromedp.CSS(sel)))
	c.step(name, func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := load(ctx, t)
		return chromedp.Void{}, err
	}, chromedp.WaitReady(chromedp.CSS("main")))
}

// until waits for the JavaScript condition on the current page, which a
// navigation ends (so it also proves the page did not reload).
func (c *chrome) until(name, cond string) {
	c.t.Helper()
	c.step(name, func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := chromedp.Poll[bool](cond, chromedp.WithPollingInterval(100*time.Millisecond),
			chromedp.WithPollingTimeout(time.Minute))(ctx, t)
		return chromedp.Void{}, err
	})
}

// eval evaluates a JavaScript expression on the page.
func eval[T any](c *chrome, expr string) T {
	c.t.Helper()
	v, err := chromedp.Run(c.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		c.t.Fatalf("evaluate %s: %v (%s)", expr, err, c.screenshot("evaluate"))
	}
	return v
}

// interactive are the accessibility roles of controls a user operates.
var interactive = map[string]bool{"button": true, "link": true, "textbox": true, "combobox": true, "checkbox": true,
	"radio": true, "spinbutton": true, "searchbox": true, "listbox": true, "switch": true, "slider": true}

// unlabelled lists the controls of the page that the browser's
// accessibility tree gives no name.
func (c *chrome) unlabelled() []string {
	c.t.Helper()
	res, err := chromedp.Call(c.ctx, accessibility.GetFullAXTree, accessibility.GetFullAXTreeParams{})
	if err != nil {
		c.t.Fatalf("accessibility tree: %v", err)
	}
	var out []string
	for _, n := range res.Nodes {
		var role, name string
		if n.Ignored || n.Role == nil || json.Unmarshal(n.Role.Value, &role) != nil || !interactive[role] {
			continue
		}
		if n.Name != nil {
			_ = json.Unmarshal(n.Name.Value, &name)
		}
		if strings.TrimSpace(name) == "" {
			out = append(out, fmt.Sprintf("%s (node %v)", role, n.NodeID))
		}
	}
	return out
}
