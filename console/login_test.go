package console_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/hookrelay/hookrelay/console"
)

// TestEveryPageNeedsASession: with credentials required, every console
// page but the login form, the static files and the portal's door sends a
// browser without a session to the login form (a GET) or answers 401 (a
// POST); every portal page answers 401 without a portal session.
func TestEveryPageNeedsASession(t *testing.T) {
	t.Parallel()
	s := newServer(t, false)
	w := newWeb(t, s)
	for _, r := range consoleRoutes(t) {
		path := routeParam.ReplaceAllString(r.Path, "x")
		if path == "/console/login" || path == "/console/static/x" || path == "/console/portal/enter/x" ||
			strings.HasSuffix(r.Path, "/*") || strings.HasSuffix(r.Path, "/portal") || strings.HasSuffix(r.Path, "/portal/") {
			continue
		}
		req, _ := http.NewRequest(r.Method, s.URL+path, nil)
		resp, _ := w.do(req)
		want := http.StatusUnauthorized
		if r.Method == http.MethodGet && !strings.HasPrefix(path, console.PortalBase) {
			want = http.StatusSeeOther
		}
		if resp.StatusCode != want || want == http.StatusSeeOther && resp.Header.Get("Location") != "/console/login" &&
			resp.Header.Get("Location") != "/console/endpoints" {
			t.Errorf("%s %s without a session: %d %q, want %d", r.Method, path, resp.StatusCode, resp.Header.Get("Location"), want)
		}
	}
}

// TestLoginTakesTheAPIsCredentials: the console logs in with an account's
// API key, which then acts as that account, or the admin key, which manages
// accounts and keys and acts as none; a wrong key is refused, and revoking
// the key ends its sessions at once.
func TestLoginTakesTheAPIsCredentials(t *testing.T) {
	t.Parallel()
	s := newServer(t, false)
	id, key := s.account(t, "acme")
	w := newWeb(t, s)
	if resp, _ := w.get("/console/endpoints"); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/console/login" {
		t.Fatalf("no session: %d %v", resp.StatusCode, resp.Header)
	}
	resp, body := w.post("/console/login", url.Values{"csrf": {w.csrf("/console/login")}, "key": {key + "x"}})
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "not valid") {
		t.Fatalf("wrong key: %d", resp.StatusCode)
	}
	w.login(key)
	if resp, body := w.get("/console/endpoints"); resp.StatusCode != http.StatusOK || !strings.Contains(body, id) {
		t.Fatalf("logged in: %d, account %s not shown", resp.StatusCode, id)
	}
	if resp, _ := w.get("/console/accounts"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("an account's key on the accounts page: %d, want 403", resp.StatusCode)
	}
	keys, err := s.st.ListAPIKeys(context.Background(), id)
	if err != nil || len(keys) != 1 {
		t.Fatal(keys, err)
	}
	if code, _ := s.api(t, adminKey, http.MethodDelete, "/v1/accounts/"+id+"/keys/"+keys[0].ID, nil); code != http.StatusOK {
		t.Fatalf("revoke: %d", code)
	}
	if resp, _ := w.get("/console/endpoints"); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("after the key's revocation: %d, want 303 to the login", resp.StatusCode)
	}
	assertAdminLogin(t, s)
}

var keyShown = regexp.MustCompile(`hr_[0-9a-f]{64}`)

// assertAdminLogin: the admin key's session makes an account and an API key
// through the forms, and the key made logs in.
func assertAdminLogin(t *testing.T, s *server) {
	t.Helper()
	admin := newWeb(t, s)
	admin.login(adminKey)
	if resp, _ := admin.get("/console/endpoints"); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/console/accounts" {
		t.Fatalf("the admin key on an account's page: %d %v, want 303 to the accounts", resp.StatusCode, resp.Header)
	}
	token := admin.csrf("/console/accounts")
	resp, body := admin.post("/console/accounts", url.Values{"csrf": {token}, "name": {"made in the console"}})
	acct := regexp.MustCompile(`acct_[0-9a-f]{20}`).FindString(body)
	if resp.StatusCode != http.StatusOK || acct == "" || !strings.Contains(body, "User ") {
		t.Fatalf("create account: %d %.400q", resp.StatusCode, body)
	}
	resp, body = admin.post("/console/accounts/"+acct+"/keys", url.Values{"csrf": {token}, "name": {"ops"}})
	key := keyShown.FindString(body)
	if resp.StatusCode != http.StatusOK || key == "" {
		t.Fatalf("create key: %d %.400q", resp.StatusCode, body)
	}
	w := newWeb(t, s)
	w.login(key)
	if resp, body := w.get("/console/queue"); resp.StatusCode != http.StatusOK || !strings.Contains(body, acct) {
		t.Fatalf("the new key's session: %d", resp.StatusCode)
	}
}
