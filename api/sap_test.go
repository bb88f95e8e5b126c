package api

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"go.temporal.io/sdk/client"

	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
)

// sapHarness is the API on a real store (and a real Temporal client when
// one is given), called through e.ServeHTTP.
type sapHarness struct {
	t  *testing.T
	st *store.Store
	e  *echo.Echo
}

func newSAPHarness(t *testing.T, st *store.Store, c client.Client) *sapHarness {
	t.Helper()
	logger := testenv.Logger()
	e := validated(t, &Server{Store: st, Temporal: c, Logger: logger, Auth: Auth{Open: true}, Egress: testenv.Egress(),
		Starter: testenv.Starter(t, c, st)})
	return &sapHarness{t: t, st: st, e: e}
}

// sapResponse is a recorded response.
type sapResponse struct {
	code   int
	body   []byte
	header http.Header
}

// json decodes the body into v, failing the test if it cannot.
func (r sapResponse) json(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
}

// errorField returns the error body's field, failing if the body is not the
// usual error shape.
func (r sapResponse) errorField(t *testing.T) string {
	t.Helper()
	var b struct {
		Error *Error `json:"error"`
	}
	r.json(t, &b)
	if b.Error == nil || b.Error.Code == "" || b.Error.Message == "" {
		t.Fatalf("not an error body: %s", r.body)
	}
	return b.Error.Field
}

// do sends a request with an optional Authorization header and JSON body.
func (h *sapHarness) do(method, path, auth, body string) sapResponse {
	h.t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if body != "" {
		req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
	}
	if auth != "" {
		req.Header.Set(echo.HeaderAuthorization, auth)
	}
	rec := httptest.NewRecorder()
	h.e.ServeHTTP(rec, req)
	return sapResponse{code: rec.Code, body: rec.Body.Bytes(), header: rec.Header()}
}

// sapAccount is an account created through POST /accounts.
type sapAccount struct {
	ID   string
	Auth string
	Org  string
	User string
}

func (h *sapHarness) newAccount(name string) sapAccount {
	h.t.Helper()
	r := h.do(http.MethodPost, "/accounts", "", `{"name":"`+name+`"}`)
	if r.code != http.StatusCreated {
		h.t.Fatalf("POST /accounts: %d %s", r.code, r.body)
	}
	var b map[string]any
	r.json(h.t, &b)
	a := sapAccount{ID: str(b["id"]), Org: str(b["organizationSecret"]), User: str(b["userSecret"])}
	a.Auth = "User " + a.User + ", Organization " + a.Org
	if a.ID == "" || len(a.Org) != 64 || len(a.User) != 64 || a.Org == a.User || str(b["authorization"]) != a.Auth {
		h.t.Fatalf("POST /accounts answered %s", r.body)
	}
	return a
}

func str(v any) string { s, _ := v.(string); return s }

// setMode switches the account's mode with the SAP settings field.
func (h *sapHarness) setMode(a sapAccount, mode string) {
	h.t.Helper()
	r := h.do(http.MethodPatch, "/accounts/"+a.ID+"/settings", a.Auth, `{"`+SettingMode+`":"`+mode+`"}`)
	if r.code != http.StatusOK {
		h.t.Fatalf("PATCH settings: %d %s", r.code, r.body)
	}
}

// subscribe creates a subscription of the account through /v1.
func (h *sapHarness) subscribe(a sapAccount, u, eventType, policy, retryPolicy string) string {
	h.t.Helper()
	body := `{"url":"` + u + `","event_types":["` + eventType + `"],"policy":"` + policy + `"`
	if retryPolicy != "" {
		body += `,"retry_policy":` + retryPolicy
	}
	r := h.do(http.MethodPost, "/v1/subscriptions", a.Auth, body+"}")
	if r.code != http.StatusCreated {
		h.t.Fatalf("POST /v1/subscriptions: %d %s", r.code, r.body)
	}
	var sub store.Subscription
	r.json(h.t, &sub)
	if sub.AccountID != a.ID && !(a.ID == "" && sub.AccountID == store.DefaultAccount) {
		h.t.Fatalf("subscription made for account %q, want %q", sub.AccountID, a.ID)
	}
	return sub.ID
}

// publish publishes an event of the account through /v1 and returns the
// deliveries Publish made.
func (h *sapHarness) publish(a sapAccount, id, eventType, data string) []store.Delivery {
	h.t.Helper()
	r := h.do(http.MethodPost, "/v1/events", a.Auth, `{"id":"`+id+`","type":"`+eventType+`","data":`+data+`}`)
	if r.code != http.StatusAccepted {
		h.t.Fatalf("POST /v1/events: %d %s", r.code, r.body)
	}
	var res PublishResponse
	r.json(h.t, &res)
	return res.Deliveries
}

// pull runs the pull query and returns the deliveries of the first page.
func (h *sapHarness) pull(auth, where string) []SAPDelivery {
	h.t.Helper()
	r := h.do(http.MethodGet, queuePath(where, ""), auth, "")
	if r.code != http.StatusOK {
		h.t.Fatalf("GET %s: %d %s", where, r.code, r.body)
	}
	var out []SAPDelivery
	r.json(h.t, &out)
	return out
}

// queuePath is the pull path with the where clause (and extra query) encoded.
func queuePath(where, extra string) string {
	p := "/notifications/subscriptions/deliveries?where=" + url.QueryEscape(where)
	if extra != "" {
		p += "&" + extra
	}
	return p
}

func deliveryIDs(ds []SAPDelivery) []string {
	out := []string{}
	for _, d := range ds {
		out = append(out, d.ID)
	}
	return out
}

func TestAccountsCreateShowAndSettings(t *testing.T) {
	t.Parallel()
	h := newSAPHarness(t, testenv.Store(t), nil)
	a := h.newAccount("acme")
	r := h.do(http.MethodGet, "/accounts/"+a.ID, a.Auth, "")
	if r.code != http.StatusOK || bytes.Contains(r.body, []byte(a.Org)) || bytes.Contains(r.body, []byte(a.User)) ||
		bytes.Contains(r.body, []byte("ecret")) {
		t.Fatalf("GET account: %d %s", r.code, r.body)
	}
	var got AccountResponse
	r.json(t, &got)
	if got.ID != a.ID || got.Name != "acme" || got.Mode != store.ModeRetry || got.Settings[SettingMode] != "retry" {
		t.Fatalf("GET account = %+v", got)
	}
	// Only hashes are stored.
	var orgHash, userHash string
	if err := h.st.DB().QueryRow(`SELECT org_secret_hash, user_secret_hash FROM accounts WHERE id = $1`, a.ID).
		Scan(&orgHash, &userHash); err != nil {
		t.Fatal(err)
	}
	if orgHash == a.Org || userHash == a.User || len(orgHash) != 64 || orgHash == userHash {
		t.Fatalf("stored %q %q", orgHash, userHash)
	}
	h.setMode(a, "queue")
	if ac, _ := h.st.GetAccount(context.Background(), a.ID); ac.Mode != store.ModeQueue {
		t.Fatalf("mode = %q after PATCH queue", ac.Mode)
	}
	r = h.do(http.MethodPatch, "/accounts/"+a.ID+"/settings", a.Auth, `{"mode":"retry"}`)
	if r.code != http.StatusOK || !strings.Contains(string(r.body), `"retry"`) {
		t.Fatalf("PATCH mode retry: %d %s", r.code, r.body)
	}
	if ac, _ := h.st.GetAccount(context.Background(), a.ID); ac.Mode != store.ModeRetry {
		t.Fatalf("mode = %q after PATCH retry", ac.Mode)
	}
}

func TestAccountsBadInput(t *testing.T) {
	t.Parallel()
	h := newSAPHarness(t, testenv.Store(t), nil)
	a := h.newAccount("acme")
	cases := []struct {
		method, path, body, field string
	}{
		{http.MethodPost, "/accounts", `{}`, "name"},
		{http.MethodPost, "/accounts", `{"name":"x","secret":"y"}`, "secret"},
		{http.MethodPatch, "/accounts/" + a.ID + "/settings", `{}`, SettingMode},
		{http.MethodPatch, "/accounts/" + a.ID + "/settings", `{"` + SettingMode + `":"push"}`, SettingMode},
		{http.MethodPatch, "/accounts/" + a.ID + "/settings", `{"mode":"sometimes"}`, "mode"},
		{http.MethodPatch, "/accounts/" + a.ID + "/settings", `{"mode":"queue","` + SettingMode + `":"retry"}`, "mode"},
		{http.MethodPatch, "/accounts/" + a.ID + "/settings", `{"other":1}`, "other"},
	}
	for _, c := range cases {
		auth := a.Auth
		if c.path == "/accounts" { // the admin's route: open mode, no credentials
			auth = ""
		}
		r := h.do(c.method, c.path, auth, c.body)
		if r.code != http.StatusBadRequest || r.errorField(t) != c.field {
			t.Errorf("%s %s %s: %d %s, want 400 naming %q", c.method, c.path, c.body, r.code, r.body, c.field)
		}
	}
	if ac, _ := h.st.GetAccount(context.Background(), a.ID); ac.Mode != store.ModeRetry {
		t.Fatalf("mode changed to %q by bad input", ac.Mode)
	}
	var n int
	if err := h.st.DB().QueryRow(`SELECT count(*) FROM accounts`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("%d accounts (%v), want the default and acme", n, err)
	}
}

func TestParseAuthorization(t *testing.T) {
	t.Parallel()
	org, user, err := parseAuthorization("Organization o1 , user u1, Element e")
	if err != nil || org != "o1" || user != "u1" {
		t.Fatalf("got %q %q %v", org, user, err)
	}
	for _, h := range []string{"Bearer x", "User u", "Organization o", "User u, User v, Organization o", "User , Organization o"} {
		if _, _, err := parseAuthorization(h); err == nil {
			t.Errorf("%q accepted", h)
		}
	}
}
