package console_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/hookrelay/hookrelay/api"
	"github.com/hookrelay/hookrelay/console"
	"github.com/hookrelay/hookrelay/testenv"
)

// wantCSP is the Content-Security-Policy of every console answer.
const wantCSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'"

// inline finds what a strict CSP would block in a page: an inline script,
// a style attribute or element, an event handler attribute.
var inline = regexp.MustCompile(`(?i)<script(\s[^>]*)?>\s*[^<\s]|<style|\sstyle=|\son[a-z]+=`)

// TestEveryAnswerHasTheSecurityHeaders: every console answer, page or
// error, found or not, has the strict CSP (no framing), X-Frame-Options,
// nosniff, no referrer and no caching; and no page holds anything inline
// that the CSP would block.
func TestEveryAnswerHasTheSecurityHeaders(t *testing.T) {
	t.Parallel()
	s := newServer(t, true)
	w := newWeb(t, s)
	paths := map[string]int{"/console/login": 303, "/console/endpoints": 200, "/console/deliveries": 200,
		"/console/events": 200, "/console/dead-letters": 200, "/console/subscriptions": 200, "/console/queue": 200,
		"/console/accounts": 200, "/console/nowhere": 404, "/console/deliveries/dlv_00000000000000000000": 404,
		"/console/portal/endpoints": 401, "/console/portal/enter/not.atoken": 401, "/console/static/console.css": 200,
		"/console/deliveries?status=nonsense": 200, "/console/events?id=nope": 200, "/console/deliveries?status=%00": 400,
		"/console/portal/nowhere": 404}
	for path, status := range paths {
		resp, body := w.get(path)
		h := resp.Header
		if resp.StatusCode != status || h.Get("Content-Security-Policy") != wantCSP || h.Get("X-Frame-Options") != "DENY" ||
			h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("GET %s: %d, headers %v; want %d with the console's security headers", path, resp.StatusCode, h, status)
		}
		if strings.HasPrefix(h.Get("Content-Type"), "text/html") && inline.MatchString(body) {
			t.Errorf("GET %s: something inline the CSP blocks: %q", path, inline.FindString(body))
		}
	}
}

// consoleRoutes are the console's routes, from the API's router.
func consoleRoutes(t *testing.T) []echo.Route {
	var out []echo.Route
	for _, r := range api.New(&api.Server{Logger: testenv.Logger()}).Routes() {
		if console.IsConsolePath(r.Path) && r.Method != echo.RouteNotFound {
			out = append(out, *r)
		}
	}
	if len(out) < 40 {
		t.Fatalf("only %d console routes", len(out))
	}
	return out
}

var routeParam = regexp.MustCompile(`:[a-z_]+|\*`)

// TestEveryChangeNeedsTheCSRFToken: every POST route of the console and
// of the portal answers 403 to a session's request without its CSRF token
// or with another session's, and changes nothing; with it, a change is
// made.
func TestEveryChangeNeedsTheCSRFToken(t *testing.T) {
	t.Parallel()
	s := newServer(t, true)
	w, other := newWeb(t, s), newWeb(t, s)
	token, otherToken := w.csrf("/console/subscriptions"), other.csrf("/console/subscriptions")
	n := 0
	for _, r := range consoleRoutes(t) {
		if r.Method != http.MethodPost || strings.HasPrefix(r.Path, console.PortalBase) || r.Path == "/console/*" {
			continue
		}
		path := routeParam.ReplaceAllString(r.Path, "x")
		for _, form := range []url.Values{{}, {"csrf": {otherToken}}, {"csrf": {token + "x"}}} {
			form.Set("url", "http://127.0.0.1:9/hook")
			form.Set("event_types", "a")
			if resp, body := w.post(path, form); resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "CSRF") {
				t.Errorf("POST %s with %v: %d, want 403", path, form, resp.StatusCode)
			}
		}
		n++
	}
	if n < 20 {
		t.Fatalf("only %d POST routes", n)
	}
	if _, out := s.api(t, "", http.MethodGet, "/v1/subscriptions", nil); len(out["subscriptions"].([]any)) != 0 {
		t.Fatalf("a change went through: %v", out)
	}
	resp, body := w.post("/console/subscriptions", url.Values{"csrf": {token}, "url": {"http://127.0.0.1:9/hook"},
		"event_types": {"a, b"}})
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "whsec_") {
		t.Fatalf("create with the token: %d %.500q", resp.StatusCode, body)
	}
	assertPortalNeedsCSRF(t, s)
}

// assertPortalNeedsCSRF: the portal's changes need its own session's token.
func assertPortalNeedsCSRF(t *testing.T, s *server) {
	t.Helper()
	_, out := s.api(t, "", http.MethodPost, "/v1/portal-sessions", map[string]any{})
	link, _ := url.Parse(out["url"].(string))
	p := newWeb(t, s)
	if resp, _ := p.get(link.Path); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("portal link: %d", resp.StatusCode)
	}
	form := url.Values{"url": {"http://127.0.0.1:9/p"}, "event_types": {"a"}}
	if resp, _ := p.post("/console/portal/subscriptions", form); resp.StatusCode != http.StatusForbidden {
		t.Errorf("portal POST without the token: %d, want 403", resp.StatusCode)
	}
	form.Set("csrf", p.csrf("/console/portal/subscriptions"))
	if resp, body := p.post("/console/portal/subscriptions", form); resp.StatusCode != http.StatusOK || !strings.Contains(body, "whsec_") {
		t.Errorf("portal POST with the token: %d %.300q", resp.StatusCode, body)
	}
}

// TestSessionCookies: the console's cookies are HttpOnly and
// SameSite=Strict, Secure but over plain HTTP to a loopback host.
func TestSessionCookies(t *testing.T) {
	t.Parallel()
	s := newServer(t, false)
	for host, secure := range map[string]bool{"": false, "console.example": true, "10.0.0.1:8080": true, "localhost:8080": false} {
		req, _ := http.NewRequest(http.MethodGet, s.URL+"/console/login", nil)
		if host != "" {
			req.Host = host
		}
		resp, _ := newWeb(t, s).do(req)
		cookies := resp.Cookies()
		if len(cookies) != 1 || cookies[0].Name != "hookrelay_console" || !cookies[0].HttpOnly ||
			cookies[0].SameSite != http.SameSiteStrictMode || cookies[0].Secure != secure || cookies[0].Path != "/console" {
			t.Errorf("Host %q: cookies %v, want one HttpOnly, SameSite=Strict, Secure=%v", host, resp.Header["Set-Cookie"], secure)
		}
	}
}
