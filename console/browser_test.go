package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestConsoleInChromium drives the console in a real headless Chromium, on
// real servers and receivers: it logs in by keyboard with an API key,
// creates a subscription through the form, watches a delivery published
// through the API appear and its attempt arrive without a reload, freezes an
// endpoint by failures and unfreezes it from its page, redrives a dead
// letter, shows hostile content as text with no script run and no console
// error, labels every control, and opens a portal link through which
// another account's endpoint, delivery and event are unreachable, URL
// guessing included. A failed step leaves a screenshot in the folder its
// message names.
func TestConsoleInChromium(t *testing.T) {
	s := newServer(t, false)
	a, keyA := s.account(t, "acme")
	b, keyB := s.account(t, "other")
	other := subscribeAndPublish(t, s, b, keyB, "b.private")
	c := newChrome(t, s.URL)
	loginByKeyboard(t, c, keyA)
	orders := newReceiver(t)
	createThroughForm(t, c, orders.URL+"/orders", "order.created")
	deliveryAppearsLive(t, c, s, keyA, orders)
	frozen := freezeAndUnfreeze(t, c, s, keyA)
	redriveDeadLetter(t, c, s, keyA)
	hostileInBrowser(t, c, s, keyA)
	everyControlLabelled(t, c, "/console/endpoints", "/console/deliveries", "/console/events", "/console/dead-letters",
		"/console/subscriptions", "/console/queue", "/console/endpoints/"+frozen)
	ep := endpointOf(t, s, keyA, orders.URL+"/orders")
	portalIsolation(t, c, s, tenant{account: a, key: keyA, endpoint: ep, url: orders.URL + "/orders"}, frozen, other)
}

// loginByKeyboard logs in by typing the key and Enter, then skips to the
// content with Tab and Enter.
func loginByKeyboard(t *testing.T, c *chrome, key string) {
	c.open("/console/login")
	c.step("type the key, press Enter", chromedp.SendKeys(chromedp.ID("key"), key+kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`nav[aria-label="Main"]`)))
	if p := eval[string](c, "location.pathname"); p != "/console/endpoints" {
		t.Fatalf("after the login: %s", p)
	}
	c.step("Tab to the skip link, Enter", chromedp.KeyEvent(kb.Tab), chromedp.KeyEvent(kb.Enter))
	if id := eval[string](c, "document.activeElement.id"); id != "main" {
		t.Errorf("the skip link moved the focus to %q, want main", id)
	}
}

// createThroughForm creates a subscription with the form and checks that
// its secret is shown.
func createThroughForm(t *testing.T, c *chrome, hook, types string) {
	c.open("/console/subscriptions")
	c.step("fill in the new subscription", chromedp.SendKeys(chromedp.ID("s-url"), hook),
		chromedp.SendKeys(chromedp.ID("s-types"), types))
	c.submit("create it", `form[action="/console/subscriptions"] button[type=submit]`)
	if text := eval[string](c, "document.querySelector('main').innerText"); !strings.Contains(text, "whsec_") {
		t.Fatalf("no signing secret shown: %q", text)
	}
}

// deliveryAppearsLive publishes through the API while the deliveries page
// is open: the delivery appears there, and its attempt on its own page once
// the receiver answers, with no reload (a mark set on the page stays).
func deliveryAppearsLive(t *testing.T, c *chrome, s *server, key string, rcv *receiver) {
	release := make(chan struct{})
	var once sync.Once
	done := func() { once.Do(func() { close(release) }) }
	t.Cleanup(done) // before the receiver closes, which waits for its handlers
	rcv.answer(func(http.ResponseWriter) { <-release })
	c.open("/console/deliveries")
	eval[int](c, "window.mark = 42")
	if code, out := s.api(t, key, http.MethodPost, "/v1/events", map[string]any{"id": "order-1", "type": "order.created",
		"data": map[string]any{"total": 12}}); code != http.StatusAccepted {
		t.Fatalf("publish: %d %v", code, out)
	}
	c.until("the delivery appears", `!!document.querySelector('tr.delivery a')`)
	c.submit("open the delivery", "tr.delivery a")
	eval[int](c, "window.mark = 43")
	done()
	c.until("its attempt appears, delivered", `!!document.querySelector('#delivery-status .status-delivered') &&
		[...document.querySelectorAll('tr.attempt td')].some(td => td.innerText.trim() === '200')`)
	if eval[int](c, "window.mark") != 43 {
		t.Fatal("the delivery page reloaded instead of refreshing in place")
	}
	if !eval[bool](c, `!!document.querySelector('a[href^="http://127.0.0.1:8233/namespaces/default/workflows/"]')`) {
		t.Error("no link to the workflow in the Temporal Web UI")
	}
}

// freezeAndUnfreeze freezes an endpoint by failures (a rule set through its
// page's form) while its page shows it, then unfreezes it with the button;
// its waiting deliveries are then delivered. It returns the endpoint's id.
func freezeAndUnfreeze(t *testing.T, c *chrome, s *server, key string) string {
	rcv := newReceiver(t)
	rcv.answer(func(w http.ResponseWriter) { w.WriteHeader(http.StatusInternalServerError) })
	createThroughForm(t, c, rcv.URL+"/pay", "pay.failed")
	ep := endpointOf(t, s, key, rcv.URL+"/pay")
	c.open("/console/endpoints/" + ep)
	c.step("freeze after 2 failures in a row", chromedp.SendKeys(chromedp.ID("rule-freeze_always_after"), "2"))
	c.submit("save the rules", `form[action$="/health"] button`)
	eval[int](c, "window.mark = 7")
	for _, id := range []string{"pay-1", "pay-2"} {
		s.api(t, key, http.MethodPost, "/v1/events", map[string]any{"id": id, "type": "pay.failed"})
	}
	c.until("the page shows it frozen", `!!document.querySelector('#endpoint-state .state-frozen')`)
	if eval[int](c, "window.mark") != 7 {
		t.Fatal("the endpoint page reloaded instead of refreshing in place")
	}
	rcv.answer(nil)
	c.submit("unfreeze", `form[action$="/unfreeze"] button`)
	c.until("the page shows it enabled", `!!document.querySelector('#endpoint-state .state-enabled')`)
	waitFor(t, "its waiting deliveries delivered", func() bool {
		_, out := s.api(t, key, http.MethodGet, "/v1/deliveries?status=delivered&endpoint_id="+ep, nil)
		ds, _ := out["deliveries"].([]any)
		return len(ds) == 2
	})
	return ep
}

// endpointOf is the id of the endpoint of the account's subscription to hook.
func endpointOf(t *testing.T, s *server, key, hook string) string {
	t.Helper()
	_, out := s.api(t, key, http.MethodGet, "/v1/subscriptions", nil)
	for _, sub := range out["subscriptions"].([]any) {
		if m := sub.(map[string]any); m["url"] == hook {
			return m["endpoint_id"].(string)
		}
	}
	t.Fatalf("no subscription to %s", hook)
	return ""
}

// redriveDeadLetter watches a dead letter appear on its page and redrives
// it with its button, once the receiver is fixed.
func redriveDeadLetter(t *testing.T, c *chrome, s *server, key string) {
	rcv := newReceiver(t)
	rcv.answer(func(w http.ResponseWriter) { w.WriteHeader(http.StatusBadRequest) })
	if code, out := s.api(t, key, http.MethodPost, "/v1/subscriptions", map[string]any{"url": rcv.URL + "/dl",
		"event_types": []string{"dl.test"}, "policy": "eventgrid", "retry_policy": map[string]any{"dead_lettering": true}}); code != http.StatusCreated {
		t.Fatalf("subscribe: %d %v", code, out)
	}
	c.open("/console/dead-letters")
	s.api(t, key, http.MethodPost, "/v1/events", map[string]any{"id": "dl-1", "type": "dl.test"})
	c.until("the dead letter appears", `!!document.querySelector('tr.deadletter button')`)
	rcv.answer(nil)
	c.submit("redrive it", "tr.deadletter button")
	c.until("the redriven delivery is delivered", `!!document.querySelector('#delivery-status .status-delivered')`)
}

// hostileInBrowser opens the pages of a hostile event and answer: no
// script runs, no dialog opens, nothing is logged as an error.
func hostileInBrowser(t *testing.T, c *chrome, s *server, key string) {
	_, dlv := hostile(t, s, key)
	mark := c.mark()
	c.open("/console/deliveries/" + dlv)
	if text := eval[string](c, "document.querySelector('pre.response').innerText"); !strings.Contains(text, hostileScript) {
		t.Errorf("the receiver's answer is not shown as text: %q", text)
	}
	c.open("/console/events")
	c.open("/console/subscriptions")
	if eval[bool](c, "'hostile' in window") {
		t.Error("a hostile script ran")
	}
	if p := c.seen(mark); len(p) > 0 {
		t.Errorf("dialogs, exceptions or errors on the hostile pages: %v", p)
	}
}

// everyControlLabelled checks the accessibility tree of each page: every
// control a user operates has a name.
func everyControlLabelled(t *testing.T, c *chrome, paths ...string) {
	for _, p := range paths {
		c.open(p)
		if bad := c.unlabelled(); len(bad) > 0 {
			t.Errorf("%s: controls without a name: %v", p, bad)
		}
	}
}

// portalIsolation opens a portal link scoped to in's endpoint, in a browser
// without other cookies: the other endpoint of the account and everything
// of the other account are absent, and 404 when their URLs are guessed.
func portalIsolation(t *testing.T, c *chrome, s *server, in tenant, outEndpoint string, other tenant) {
	link := portalLink(t, s, in.key, map[string]any{"endpoint_ids": []string{in.endpoint}})
	if _, err := chromedp.Call(c.ctx, network.ClearBrowserCookies, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	c.open(link)
	text := eval[string](c, "document.body.innerText")
	if !strings.Contains(text, in.url) || strings.Contains(text, other.url) {
		t.Errorf("the portal's endpoints: %q", text)
	}
	everyControlLabelled(t, c, "/console/portal/endpoints", "/console/portal/subscriptions", "/console/portal/deliveries",
		"/console/portal/event-types")
	for _, path := range []string{"/endpoints/" + other.endpoint, "/deliveries/" + other.delivery, "/events/" + url.PathEscape(other.event),
		"/subscriptions/" + other.subscription, "/endpoints/" + outEndpoint} {
		c.open("/console/portal" + path)
		if h1 := eval[string](c, "document.querySelector('h1').innerText"); h1 != "Not Found" {
			t.Errorf("portal %s: %q, want Not Found", path, h1)
		}
	}
	c.open("/console/endpoints/" + other.endpoint)
	if p := eval[string](c, "location.pathname"); p != "/console/login" {
		t.Errorf("an operator's page through the portal: at %s, want the login", p)
	}
}
