package console_test

import (
	"bytes"
	"image/png"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/hookrelay/hookrelay/docs"
)

// TestDocsScreenshots takes the screenshots of docs/console.md in Chromium,
// on data like a `hookrelay dev` trial's (open mode): endpoints enabled,
// disabled by hand and frozen by failures, and a delivery that succeeded
// at its third attempt. It writes them to HOOKRELAY_CONSOLE_DOCS_IMG when
// set (docs/img, to refresh the committed ones), else to a temporary
// folder, and checks they are whole PNG pages.
func TestDocsScreenshots(t *testing.T) {
	s := newServer(t, true)
	dir := os.Getenv("HOOKRELAY_CONSOLE_DOCS_IMG")
	if dir == "" {
		dir = t.TempDir()
	}
	delivery, frozen := docsData(t, s)
	c := newChrome(t, s.URL)
	c.open("/console/endpoints/" + frozen)
	c.until("the endpoint frozen", `!!document.querySelector('#endpoint-state .state-frozen')`)
	c.open("/console/endpoints")
	c.until("the four endpoints listed, one frozen, one disabled", `document.querySelectorAll('#endpoints-live tbody tr').length === 4 &&
		!!document.querySelector('#endpoints-live .state-frozen') && !!document.querySelector('#endpoints-live .state-disabled')`)
	shoot(t, c, filepath.Join(dir, "console-endpoints.png"))
	c.open("/console/deliveries/" + delivery)
	c.until("its three attempts", `document.querySelectorAll('tr.attempt').length === 3`)
	shoot(t, c, filepath.Join(dir, "console-delivery.png"))
}

// docsData publishes to three receivers: one healthy, one that fails twice
// (the delivery returned), one always failing, frozen after two failures;
// a fourth endpoint is disabled by hand. It returns the delivery and the
// frozen endpoint.
func docsData(t *testing.T, s *server) (delivery, frozen string) {
	t.Helper()
	orders, billing, crm, legacy := newReceiver(t), newReceiver(t), newReceiver(t), newReceiver(t)
	var fails atomic.Int32
	billing.answer(func(w http.ResponseWriter) {
		if fails.Add(1) <= 2 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"error": "database is restarting"}`))
		}
	})
	crm.answer(func(w http.ResponseWriter) { w.WriteHeader(http.StatusBadGateway) })
	fast := map[string]any{"custom": map[string]any{"kind": "fixed", "interval_seconds": 1}}
	subscribe(t, s, map[string]any{"url": orders.URL + "/webhooks/orders", "event_types": []string{"order.created", "order.paid"}})
	subscribe(t, s, map[string]any{"url": billing.URL + "/hooks/billing", "event_types": []string{"invoice.paid"},
		"policy": "custom", "retry_policy": fast})
	crmEP := subscribe(t, s, map[string]any{"url": crm.URL + "/crm/inbound", "event_types": []string{"customer.updated"}})
	legacyEP := subscribe(t, s, map[string]any{"url": legacy.URL + "/legacy", "event_types": []string{"order.created"}})
	s.api(t, "", http.MethodPut, "/v1/endpoints/"+crmEP+"/health", map[string]any{"freeze_always_after": 2})
	s.api(t, "", http.MethodPost, "/v1/endpoints/"+legacyEP+"/disable", map[string]any{"reason": "migrating to the new CRM"})
	for i, typ := range []string{"order.created", "order.paid", "customer.updated", "customer.updated", "invoice.paid"} {
		code, out := s.api(t, "", http.MethodPost, "/v1/events", map[string]any{"type": typ,
			"data": map[string]any{"id": 1000 + i, "amount": "42.00", "currency": "EUR"}})
		if code != http.StatusAccepted {
			t.Fatalf("publish: %d %v", code, out)
		}
		if typ == "invoice.paid" {
			delivery = out["deliveries"].([]any)[0].(map[string]any)["id"].(string)
		}
	}
	return delivery, crmEP
}

// subscribe makes a subscription in open mode and returns its endpoint.
func subscribe(t *testing.T, s *server, body map[string]any) string {
	t.Helper()
	code, out := s.api(t, "", http.MethodPost, "/v1/subscriptions", body)
	if code != http.StatusCreated {
		t.Fatalf("subscribe: %d %v", code, out)
	}
	return out["endpoint_id"].(string)
}

// shoot saves the page as a PNG in file and checks it decodes.
func shoot(t *testing.T, c *chrome, file string) {
	t.Helper()
	b, err := chromedp.Run(c.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil || img.Bounds().Dx() < 1000 || img.Bounds().Dy() < 400 {
		t.Fatalf("screenshot %s: %v", file, err)
	}
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDocsListEveryRoute: the routes table of docs/console.md and the
// console's routes (but its catch-alls, and a trailing slash) are the same.
func TestDocsListEveryRoute(t *testing.T) {
	t.Parallel()
	listed := map[string]bool{}
	for _, cells := range docs.Table(t, "console.md", "Routes") {
		method, path := docs.CodeSpans(cells[0]), docs.CodeSpans(cells[1])
		if len(method) != 1 || len(path) != 1 {
			t.Fatalf("docs/console.md: a route row without one method and one path: %q", cells)
		}
		listed[method[0]+" "+path[0]] = true
	}
	served := map[string]bool{}
	for _, r := range consoleRoutes(t) {
		if !strings.HasSuffix(r.Path, "*") {
			served[r.Method+" "+strings.TrimSuffix(routeParamName.ReplaceAllString(r.Path, "{$1}"), "/")] = true
		}
	}
	for k := range served {
		if !listed[k] {
			t.Errorf("docs/console.md does not list %s", k)
		}
	}
	for k := range listed {
		if !served[k] {
			t.Errorf("docs/console.md lists %s, which the console does not serve", k)
		}
	}
}

var routeParamName = regexp.MustCompile(`:([a-z_]+)`)
