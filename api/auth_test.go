package api

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/hookrelay/hookrelay/console"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
)

const testAdminKey = "test-admin-key-0123456789abcdef"

// securedAPI is the API as `hookrelay api` serves it: credentials needed.
func securedAPI(t *testing.T) (*echo.Echo, *store.Store) {
	t.Helper()
	st, c := testenv.Store(t), testenv.Client(t)
	return validated(t, &Server{Store: st, Temporal: c, Logger: testenv.Logger(), Starter: testenv.Starter(t, c, st),
		Auth: Auth{AdminKey: testAdminKey, SASSecret: testSASSecret}, Egress: testenv.Egress()}), st
}

// send makes one request with the Authorization header auth ("" for none).
func send(t *testing.T, e *echo.Echo, method, path, auth, body string) (int, map[string]any) {
	t.Helper()
	header := "Authorization"
	if auth == "" {
		header = ""
	}
	return sendCT(t, e, method, path, header, auth, "application/json", body)
}

func errorField(out map[string]any) string {
	e, _ := out["error"].(map[string]any)
	field, _ := e["field"].(string)
	return field
}

func errorCode(out map[string]any) string {
	e, _ := out["error"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

// TestEveryRouteNeedsCredentials: every route Echo knows, but the health
// checks and the OpenAPI document, answers 401 in the JSON shape without
// credentials or with a bad key, and those answer without.
func TestEveryRouteNeedsCredentials(t *testing.T) {
	t.Parallel()
	e, _ := securedAPI(t)
	n := 0
	for _, r := range e.Routes() {
		path := strings.ReplaceAll(pathParam.ReplaceAllString(r.Path, "x"), "*", "x")
		if path == "/healthz" || path == "/readyz" || path == "/v1/openapi.json" {
			if code, _ := send(t, e, r.Method, path, "", ""); code != http.StatusOK {
				t.Errorf("%s %s without credentials: %d, want 200", r.Method, path, code)
			}
			continue
		}
		if console.IsConsolePath(r.Path) {
			continue // the web console's sessions: console/ tests them
		}
		if r.Path == validatePath { // a capability URL: its code is the credential
			if code, _ := send(t, e, r.Method, path+"?code=guess", "", ""); code != http.StatusNotFound {
				t.Errorf("%s %s with a wrong code: %d, want 404", r.Method, path, code)
			}
			continue
		}
		for _, auth := range []string{"", "Bearer hr_" + strings.Repeat("0", 64), "Bearer " + testAdminKey + "x", "User a, Organization b"} {
			if code, out := send(t, e, r.Method, path, auth, "{}"); code != http.StatusUnauthorized || errorCode(out) != "unauthorized" {
				t.Errorf("%s %s with %q: %d %v, want 401 unauthorized", r.Method, path, auth, code, out)
			}
		}
		for _, h := range []string{"aeg-sas-key", "aeg-sas-token"} { // Event Grid's credentials, bad
			if code, out := sendCT(t, e, r.Method, path, h, "hr_"+strings.Repeat("0", 64), "application/json", "{}"); code != http.StatusUnauthorized ||
				(eventGridRoute(r.Path) && errorField(out) != h) {
				t.Errorf("%s %s with a bad %s: %d %v, want 401 unauthorized", r.Method, path, h, code, out)
			}
		}
		n++
	}
	if n < 30 {
		t.Fatalf("only %d routes checked", n)
	}
}

// newAccountKey makes an account and an API key for it with the admin key.
func newAccountKey(t *testing.T, e *echo.Echo, name string) (id, auth string) {
	t.Helper()
	code, acct := send(t, e, http.MethodPost, "/accounts", "Bearer "+testAdminKey, `{"name":"`+name+`"}`)
	if code != http.StatusCreated {
		t.Fatalf("create account: %d %v", code, acct)
	}
	id = acct["id"].(string)
	code, key := send(t, e, http.MethodPost, "/v1/accounts/"+id+"/keys", "Bearer "+testAdminKey, `{"name":"ci"}`)
	secret, _ := key["key"].(string)
	if code != http.StatusCreated || !strings.HasPrefix(secret, store.APIKeyPrefix) {
		t.Fatalf("create key: %d %v", code, key)
	}
	return id, "Bearer " + secret
}

// TestAdminKeyManagesOnlyAccountsAndKeys: accounts and keys need the admin
// key, which acts as no account; an account's key cannot make either.
func TestAdminKeyManagesOnlyAccountsAndKeys(t *testing.T) {
	t.Parallel()
	e, st := securedAPI(t)
	id, auth := newAccountKey(t, e, "acme")
	admin := "Bearer " + testAdminKey
	for _, c := range []struct{ method, path, auth string }{
		{http.MethodGet, "/v1/subscriptions", admin},
		{http.MethodPost, "/v1/events", admin},
		{http.MethodPost, "/accounts", auth},
		{http.MethodPost, "/v1/accounts/" + id + "/keys", auth},
		{http.MethodGet, "/v1/accounts/" + id + "/keys", auth},
	} {
		if code, out := send(t, e, c.method, c.path, c.auth, `{"name":"x"}`); code != http.StatusForbidden || errorCode(out) != "forbidden" {
			t.Errorf("%s %s: %d %v, want 403", c.method, c.path, code, out)
		}
	}
	if code, out := send(t, e, http.MethodGet, "/v1/subscriptions", auth, ""); code != http.StatusOK {
		t.Fatalf("account key: %d %v", code, out)
	}
	var stored []string
	if err := st.DB().Select(&stored, `SELECT key_hash FROM api_keys WHERE account_id = $1`, id); err != nil ||
		len(stored) != 1 || strings.Contains(stored[0], strings.TrimPrefix(auth, "Bearer ")) {
		t.Fatalf("stored keys %v (%v): want one hash, not the key", stored, err)
	}
}

// TestKeysIsolateAccounts: account B's key neither sees nor acts on account
// A's subscription, and a revoked key stops working.
func TestKeysIsolateAccounts(t *testing.T) {
	t.Parallel()
	e, _ := securedAPI(t)
	idA, authA := newAccountKey(t, e, "a")
	_, authB := newAccountKey(t, e, "b")
	code, sub := send(t, e, http.MethodPost, "/v1/subscriptions", authA, `{"url":"https://a.example/hook","event_types":["*"]}`)
	if code != http.StatusCreated {
		t.Fatalf("subscribe: %d %v", code, sub)
	}
	subID, endpoint := sub["id"].(string), sub["endpoint_id"].(string)
	for _, c := range []struct{ method, path string }{
		{http.MethodGet, "/v1/subscriptions/" + subID},
		{http.MethodPost, "/v1/subscriptions/" + subID + "/reveal-secret"},
		{http.MethodGet, "/v1/endpoints/" + endpoint},
		{http.MethodPost, "/v1/endpoints/" + endpoint + "/disable"},
	} {
		if code, out := send(t, e, c.method, c.path, authB, `{}`); code != http.StatusNotFound {
			t.Errorf("B: %s %s: %d %v, want 404", c.method, c.path, code, out)
		}
	}
	if _, list := send(t, e, http.MethodGet, "/v1/subscriptions", authB, ""); len(list["subscriptions"].([]any)) != 0 {
		t.Errorf("B lists %v", list)
	}
	code, keys := send(t, e, http.MethodGet, "/v1/accounts/"+idA+"/keys", "Bearer "+testAdminKey, "")
	listed, _ := keys["keys"].([]any)
	if code != http.StatusOK || len(listed) != 1 || strings.Contains(mustJSON(t, keys), "hr_") {
		t.Fatalf("keys of A: %d %v", code, keys)
	}
	keyID := listed[0].(map[string]any)["id"].(string)
	if code, out := send(t, e, http.MethodDelete, "/v1/accounts/"+idA+"/keys/"+keyID, "Bearer "+testAdminKey, ""); code != http.StatusOK || out["revoked_at"] == nil {
		t.Fatalf("revoke: %d %v", code, out)
	}
	if code, _ := send(t, e, http.MethodGet, "/v1/subscriptions", authA, ""); code != http.StatusUnauthorized {
		t.Fatalf("revoked key: %d, want 401", code)
	}
}

// TestSubscribeRefusesDeniedAddresses: with the default guard, a URL whose
// host is a denied literal address (or localhost) is a 400 naming the field,
// and nothing is stored. Nothing is dialled: the check is on the URL.
func TestSubscribeRefusesDeniedAddresses(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	e := validated(t, &Server{Store: st, Logger: testenv.Logger(), Auth: Auth{Open: true}})
	for _, u := range []string{
		"http://127.0.0.1:8080/v1/events", "http://localhost:8080/v1/events", "http://0.0.0.0:80/",
		"http://169.254.169.254/latest/meta-data/", "http://[::1]:8080/", "http://[::ffff:169.254.169.254]/",
		"http://10.0.0.8/", "http://100.64.1.1/", "http://[fd00::8]/", "http://2130706433/",
	} {
		code, out := send(t, e, http.MethodPost, "/v1/subscriptions", "", `{"url":"`+u+`","event_types":["*"]}`)
		if f, _ := out["error"].(map[string]any); code != http.StatusBadRequest || f["field"] != "url" {
			t.Errorf("%s: %d %v, want 400 naming url", u, code, out)
		}
		code, out = send(t, e, http.MethodPut, "/eventgrid/subscriptions/s1", "",
			`{"properties":{"destination":{"endpointType":"WebHook","properties":{"endpointUrl":"`+u+`"}}}}`)
		if code != http.StatusBadRequest {
			t.Errorf("Event Grid %s: %d %v, want 400", u, code, out)
		}
	}
	var n int
	if err := st.DB().GetContext(context.Background(), &n, `SELECT count(*) FROM subscriptions`); err != nil || n != 0 {
		t.Fatalf("%d subscriptions stored (%v), want 0", n, err)
	}
}
