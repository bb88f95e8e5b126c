package api

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/labstack/echo/v4"
)

// TestOpenAPIServedAndValid: /v1/openapi.json answers without credentials
// (on a server that needs them everywhere else) with the embedded document,
// which is a valid OpenAPI 3.1 document.
func TestOpenAPIServedAndValid(t *testing.T) {
	t.Parallel()
	e, _ := securedAPI(t)
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/openapi.json", nil))
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") ||
		!bytes.Equal(rec.Body.Bytes(), OpenAPI) {
		t.Fatalf("GET /v1/openapi.json: %d %q, want 200 with api/openapi.json", rec.Code, rec.Header().Get("Content-Type"))
	}
	doc, err := openapi3.NewLoader().LoadFromData(rec.Body.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1.") {
		t.Fatalf("openapi %q, want 3.1.x", doc.OpenAPI)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("not a valid OpenAPI 3.1 document: %v", err)
	}
}

// echoParam is a path parameter as Echo writes it (:id).
var echoParam = regexp.MustCompile(`:([a-z_]+)`)

// TestOpenAPIDescribesEveryRoute: the /v1 routes Echo serves and the
// operations the document describes are the same, and the document says
// "no credentials" of exactly the routes authenticate lets through.
func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	t.Parallel()
	k, err := loadContract()
	if err != nil {
		t.Fatal(err)
	}
	served, open := map[string]bool{}, map[string]bool{}
	for _, r := range New(&Server{}).Routes() {
		if strings.HasPrefix(r.Path, "/v1/") && r.Method != echo.RouteNotFound {
			op := r.Method + " " + echoParam.ReplaceAllString(r.Path, "{$1}")
			served[op], open[op] = true, public(r.Path)
		}
	}
	described := map[string]bool{}
	for path, item := range k.doc.Paths.Map() {
		for method, op := range item.Operations() {
			key := method + " " + path
			described[key] = true
			docOpen := op.Security != nil && len(*op.Security) == 0
			if served[key] && docOpen != open[key] {
				t.Errorf("%s: the document says public=%v, the server %v", key, docOpen, open[key])
			}
		}
	}
	sameKeys(t, served, "served", described, "in api/openapi.json")
	if len(served) < 25 {
		t.Fatalf("only %d /v1 routes found", len(served))
	}
}

// sameKeys reports the keys of a that b lacks and those of b that a lacks;
// aIs and bIs say what each holds ("served", "in api/openapi.json").
func sameKeys(t *testing.T, a map[string]bool, aIs string, b map[string]bool, bIs string) {
	t.Helper()
	if missing := difference(a, b); len(missing) > 0 {
		t.Errorf("%s but not %s: %v", aIs, bIs, missing)
	}
	if extra := difference(b, a); len(extra) > 0 {
		t.Errorf("%s but not %s: %v", bIs, aIs, extra)
	}
}

// difference lists the keys of a not in b, sorted.
func difference(a, b map[string]bool) []string {
	var out []string
	for k := range a {
		if !b[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// TestContractCheckCatchesDrift: the check the api tests run on every /v1
// exchange refuses an undocumented route or status, an answer unlike its
// schema and a 2xx to a request the document calls invalid, and accepts a
// refused bad request and a documented answer.
func TestContractCheckCatchesDrift(t *testing.T) {
	t.Parallel()
	k, err := loadContract()
	if err != nil {
		t.Fatal(err)
	}
	jsonHeader := http.Header{"Content-Type": {"application/json"}}
	backlog := `{"pending": 1, "unstarted": 0, "oldest_pending_at": null, "lag_seconds": 0.5}`
	badRequest := `{"error": {"code": "invalid_request", "message": "type is required", "field": "type"}}`
	for _, c := range []struct {
		method, path, reqBody string
		status                int
		body                  string
		ok                    bool
	}{
		{http.MethodGet, "/v1/backlog", "", http.StatusOK, backlog, true},
		{http.MethodGet, "/v1/backlog", "", http.StatusOK, `{"pending": 1}`, false},
		{http.MethodGet, "/v1/backlog", "", http.StatusOK, strings.Replace(backlog, "}", `, "extra": 1}`, 1), false},
		{http.MethodGet, "/v1/backlog", "", http.StatusTeapot, badRequest, false},
		{http.MethodGet, "/v1/backlog", "", http.StatusBadRequest, `{"message": "no code"}`, false},
		{http.MethodGet, "/v1/nowhere", "", http.StatusOK, `{}`, false},
		{http.MethodPost, "/v1/events", `{"type": ""}`, http.StatusBadRequest, badRequest, true},
		{http.MethodPost, "/v1/events", `{"type": ""}`, http.StatusAccepted, `{"id": "e", "duplicate": false, "deliveries": []}`, false},
		{http.MethodPost, "/v1/events", `{"type": "t"}`, http.StatusAccepted, `{"id": "e", "duplicate": false, "deliveries": []}`, true},
	} {
		req := httptest.NewRequest(c.method, c.path, strings.NewReader(c.reqBody))
		req.Header.Set("Content-Type", "application/json")
		err := k.check(context.Background(), exchange{req: req, reqBody: []byte(c.reqBody), status: c.status,
			header: jsonHeader, body: []byte(c.body)})
		if (err == nil) != c.ok {
			t.Errorf("%s %s %s → %d %s: check says %v, want ok=%v", c.method, c.path, c.reqBody, c.status, c.body, err, c.ok)
		}
	}
}

// TestOpenAPIReadRoutes: the reads no other test makes (backlog, policies,
// the /v1 pull queue, an Event Grid subscription through /v1) answer 200,
// so that the contract check validates their answers too.
func TestOpenAPIReadRoutes(t *testing.T) {
	t.Parallel()
	st, c := testenvStore(t), testenvClient(t)
	e := testAPI(t, st, c)
	if code, out := call(t, e, http.MethodPut, "/eventgrid/subscriptions/described", egSub("https://eg.example/hook", "")); code != http.StatusCreated {
		t.Fatalf("Event Grid subscription: %d %v", code, out)
	}
	paths := []string{"/v1/backlog", "/v1/policies", "/v1/subscriptions"}
	_, list := call(t, e, http.MethodGet, "/v1/subscriptions", "")
	for _, s := range list["subscriptions"].([]any) {
		paths = append(paths, "/v1/subscriptions/"+s.(map[string]any)["id"].(string))
	}
	_, ps := call(t, e, http.MethodGet, "/v1/policies", "")
	for _, p := range ps["policies"].([]any) {
		paths = append(paths, "/v1/policies/"+p.(map[string]any)["name"].(string))
	}
	if len(paths) < 3+1+5 {
		t.Fatalf("only %v", paths)
	}
	queue := "/v1/notifications/subscriptions/deliveries?where=" + url.QueryEscape("status='queued'")
	type request struct{ method, path string }
	reqs := []request{{http.MethodGet, queue}, {http.MethodPut, queue}}
	for _, p := range paths {
		reqs = append(reqs, request{http.MethodGet, p})
	}
	for _, r := range reqs {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(r.method, r.path, nil))
		if rec.Code != http.StatusOK {
			t.Errorf("%s %s: %d %s", r.method, r.path, rec.Code, rec.Body)
		}
	}
}
