package console_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/console"
)

// tenant is one account's subscription, endpoint, event and delivery.
type tenant struct {
	account, key                string
	endpoint, subscription, url string
	event, delivery, eventType  string
}

// subscribeAndPublish makes a subscription of key's account to a new
// receiver for eventType and publishes one event of it.
func subscribeAndPublish(t *testing.T, s *server, account, key, eventType string) tenant {
	t.Helper()
	rcv := newReceiver(t)
	hook := rcv.URL + "/hook-" + eventType
	code, sub := s.api(t, key, http.MethodPost, "/v1/subscriptions", map[string]any{"url": hook, "event_types": []string{eventType}})
	if code != http.StatusCreated {
		t.Fatalf("subscribe: %d %v", code, sub)
	}
	tn := tenant{account: account, key: key, endpoint: sub["endpoint_id"].(string), subscription: sub["id"].(string),
		url: hook, event: "evt-" + eventType + "-" + account, eventType: eventType}
	code, ev := s.api(t, key, http.MethodPost, "/v1/events", map[string]any{"id": tn.event, "type": eventType})
	if code != http.StatusAccepted {
		t.Fatalf("publish: %d %v", code, ev)
	}
	tn.delivery = ev["deliveries"].([]any)[0].(map[string]any)["id"].(string)
	return tn
}

// portalLink makes a portal link of the tenant's account with scope.
func portalLink(t *testing.T, s *server, key string, scope map[string]any) string {
	t.Helper()
	code, out := s.api(t, key, http.MethodPost, "/v1/portal-sessions", scope)
	if code != http.StatusCreated {
		t.Fatalf("portal session: %d %v", code, out)
	}
	u, err := url.Parse(out["url"].(string))
	if err != nil || !strings.HasPrefix(u.Path, "/console/portal/enter/") {
		t.Fatalf("portal url %v", out["url"])
	}
	return u.Path
}

// TestPortalTokens: a portal link opens the portal once its token checks
// whole; an expired one, one for an account that does not exist, one whose
// claims name another account, a tampered signature and a session cookie
// passed as a link all get 401, as does a link passed as a session cookie.
func TestPortalTokens(t *testing.T) {
	t.Parallel()
	s := newServer(t, false)
	a, keyA := s.account(t, "a")
	b, _ := s.account(t, "b")
	path := portalLink(t, s, keyA, map[string]any{})
	for name, p := range badLinks(t, s, a, b, keyA, path) {
		if resp, _ := newWeb(t, s).get(strings.TrimPrefix(p, s.URL)); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: %d, want 401", name, resp.StatusCode)
		}
	}
	p := newWeb(t, s)
	if resp, _ := p.get(path); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/console/portal/endpoints" {
		t.Fatalf("the link: %d %v", resp.StatusCode, resp.Header)
	}
	if resp, _ := p.get("/console/portal/endpoints"); resp.StatusCode != http.StatusOK {
		t.Fatalf("the portal: %d", resp.StatusCode)
	}
	forged := newWeb(t, s)
	forged.c.Jar.SetCookies(mustURL(t, s.URL+"/console/portal/"), []*http.Cookie{{Name: "hookrelay_portal",
		Value: strings.TrimPrefix(path, "/console/portal/enter/")}})
	if resp, _ := forged.get("/console/portal/endpoints"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the link's token as a session cookie: %d, want 401", resp.StatusCode)
	}
}

// badLinks are portal link paths that must not open a portal, by what is
// wrong with them: made from account a's good link path, and b.
func badLinks(t *testing.T, s *server, a, b, keyA, path string) map[string]string {
	t.Helper()
	token := strings.TrimPrefix(path, "/console/portal/enter/")
	body, sig, _ := strings.Cut(token, ".")
	claims, _ := base64.RawURLEncoding.DecodeString(body)
	swapped := base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(claims), a, b, 1))) + "." + sig
	ctx := context.Background()
	c := console.New(console.Options{Store: s.st})
	expired, err := c.PortalLink(ctx, "", a, console.PortalScope{}, time.Now().Add(-time.Second))
	if err != nil {
		t.Fatal(err)
	}
	nobody, _ := c.PortalLink(ctx, "", "acct_00000000000000000000", console.PortalScope{}, time.Now().Add(time.Hour))
	w := newWeb(t, s)
	w.login(keyA)
	session := w.c.Jar.Cookies(mustURL(t, s.URL+"/console/"))
	if len(session) != 1 {
		t.Fatalf("session cookies %v", session)
	}
	return map[string]string{"expired": expired, "no such account": nobody, "another account": "/console/portal/enter/" + swapped,
		"tampered": flip(path, len(path)-5, 8), "the same bytes spelled otherwise": flip(path, len(path)-1, 1),
		"a session cookie": "/console/portal/enter/" + session[0].Value, "not a token": path + ".x"}
}

// base64url is the alphabet of the tokens.
const base64url = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// flip changes the base64url character at i of s by XOR-ing its value with
// bits: 8 changes the bytes it encodes; 1, in the last character of a
// 32-byte signature, only bits that encode nothing.
func flip(s string, i, bits int) string {
	v := strings.IndexByte(base64url, s[i])
	return s[:i] + string(base64url[v^bits]) + s[i+1:]
}

func mustURL(t *testing.T, raw string) *url.URL {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestPortalSeesItsScopeOnly: through a portal scoped to one endpoint, the
// account's other endpoint and another account's endpoint, subscription,
// delivery and event are unreachable whatever the URL (404 pages and
// changes), absent from every list, and the operator's pages want a login;
// an event-type scope keeps to its types.
func TestPortalSeesItsScopeOnly(t *testing.T) {
	t.Parallel()
	s := newServer(t, false)
	a, keyA := s.account(t, "a")
	b, keyB := s.account(t, "b")
	in := subscribeAndPublish(t, s, a, keyA, "a.in")
	out := subscribeAndPublish(t, s, a, keyA, "a.out")
	other := subscribeAndPublish(t, s, b, keyB, "b.any")
	p := newWeb(t, s)
	p.get(portalLink(t, s, keyA, map[string]any{"endpoint_ids": []string{in.endpoint}}))
	assertSees(t, p, in, out, other)
	token := p.csrf("/console/portal/endpoints")
	for _, x := range []tenant{out, other} {
		assertUnreachable(t, p, token, x)
	}
	if resp, _ := p.get("/console/endpoints/" + in.endpoint); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("an operator's page through the portal: %d, want 303 to the login", resp.StatusCode)
	}
	if code, _ := s.api(t, keyB, http.MethodGet, "/v1/subscriptions/"+other.subscription, nil); code != http.StatusOK {
		t.Errorf("account b's subscription is gone: %d", code)
	}
	form := url.Values{"csrf": {token}, "url": {out.url}, "event_types": {"a.in"}}
	if resp, body := p.post("/console/portal/subscriptions", form); resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, in.url) {
		t.Errorf("subscribing another endpoint's URL: %d, want 400 naming the portal's URL", resp.StatusCode)
	}
	typed := newWeb(t, s)
	typed.get(portalLink(t, s, keyA, map[string]any{"event_types": []string{"a.out"}}))
	assertSees(t, typed, out, in, other)
}

// assertUnreachable checks that the portal p answers 404 to the pages and
// changes of x, and that a list filtered by x's endpoint is empty.
func assertUnreachable(t *testing.T, p *web, token string, x tenant) {
	t.Helper()
	for _, path := range []string{"/endpoints/" + x.endpoint, "/deliveries/" + x.delivery, "/subscriptions/" + x.subscription,
		"/events/" + x.event, "/deliveries?endpoint=" + x.endpoint} {
		resp, body := p.get("/console/portal" + path)
		if strings.Contains(path, "?") && resp.StatusCode == http.StatusOK && !strings.Contains(body, x.delivery) {
			continue // a list filtered by what is out of scope: empty
		}
		if resp.StatusCode != http.StatusNotFound || !strings.Contains(body, "<h1>Not Found</h1>") {
			t.Errorf("GET %s: %d, want the 404 page", path, resp.StatusCode)
		}
	}
	for _, path := range []string{"/endpoints/" + x.endpoint + "/disable", "/deliveries/" + x.delivery + "/retry",
		"/subscriptions/" + x.subscription + "/rotate", "/subscriptions/" + x.subscription + "/delete"} {
		if resp, _ := p.post("/console/portal"+path, url.Values{"csrf": {token}}); resp.StatusCode != http.StatusNotFound {
			t.Errorf("POST %s: %d, want 404", path, resp.StatusCode)
		}
	}
}

// assertSees checks that the portal's lists show in, and neither of the
// others.
func assertSees(t *testing.T, p *web, in tenant, others ...tenant) {
	t.Helper()
	for _, page := range []string{"/endpoints", "/deliveries", "/subscriptions"} {
		resp, body := p.get("/console/portal" + page)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d", page, resp.StatusCode)
		}
		if !strings.Contains(body, in.url) && !strings.Contains(body, in.delivery) {
			t.Errorf("%s does not show %s", page, in.url)
		}
		for _, x := range others {
			if strings.Contains(body, x.url) || strings.Contains(body, x.delivery) || strings.Contains(body, x.endpoint) {
				t.Errorf("%s shows what is out of scope (%s)", page, x.url)
			}
		}
	}
	for _, path := range []string{"/endpoints/" + in.endpoint, "/deliveries/" + in.delivery, "/subscriptions/" + in.subscription} {
		if resp, _ := p.get("/console/portal" + path); resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s in scope: %d", path, resp.StatusCode)
		}
	}
}
