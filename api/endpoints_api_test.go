package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"go.temporal.io/sdk/client"

	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/workflows"
)

// callAs is call with an Authorization header ("" sends none); it also
// returns the raw body.
func callAs(t *testing.T, e *echo.Echo, method, path, auth, body string) (int, map[string]any, string) {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
	if auth != "" {
		req.Header.Set(echo.HeaderAuthorization, auth)
	}
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	var out map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("%s %s: answer is not a JSON object: %q", method, path, rec.Body.String())
	}
	return rec.Code, out, rec.Body.String()
}

// endpointOf subscribes the account (auth) to url and returns the endpoint
// id; the endpoint's workflow is ended with the test.
func endpointOf(t *testing.T, e *echo.Echo, c client.Client, auth, url string) string {
	t.Helper()
	code, sub, raw := callAs(t, e, http.MethodPost, "/v1/subscriptions", auth,
		mustJSON(t, map[string]any{"url": url, "event_types": []string{"order.created"}}))
	id := str(sub["endpoint_id"])
	if code != http.StatusCreated || id == "" {
		t.Fatalf("subscribe: %d %s", code, raw)
	}
	t.Cleanup(func() {
		_ = c.TerminateWorkflow(context.Background(), workflows.EndpointWorkflowID(id), "", "test ended")
	})
	return id
}

// changes are the state changes GET /v1/endpoints/{id} shows.
func changes(v map[string]any) []map[string]any {
	var out []map[string]any
	list, _ := v["changes"].([]any)
	for _, c := range list {
		m, _ := c.(map[string]any)
		out = append(out, m)
	}
	return out
}

// waitState waits until the endpoint shows state with n recorded changes.
func waitState(t *testing.T, e *echo.Echo, id, state string, n int) map[string]any {
	t.Helper()
	var ep map[string]any
	waitFor(t, "endpoint "+state, 30*time.Second, func() bool {
		_, ep = call(t, e, http.MethodGet, "/v1/endpoints/"+id, "")
		return ep["state"] == state && len(changes(ep)) == n
	})
	return ep
}

// TestEndpointOperatorRoutes: the endpoint's shape after one delivery, an
// operator's disable (with its reason) and enable through the real endpoint
// workflow, and unfreeze refused on an endpoint that is not frozen.
func TestEndpointOperatorRoutes(t *testing.T) {
	t.Parallel()
	st, c := testenvStore(t), testenvClient(t)
	e := testAPI(t, st, c)
	runWorker(t, st, c)
	rcv := newReceiver(t)
	id := endpointOf(t, e, c, "", rcv.URL+"/hooks")
	if code, body := call(t, e, http.MethodPost, "/v1/events", `{"id":"ep-1","type":"order.created","data":{}}`); code != http.StatusAccepted {
		t.Fatalf("publish: %d %v", code, body)
	}
	waitFor(t, "delivered", 30*time.Second, func() bool {
		_, ev := call(t, e, http.MethodGet, "/v1/events/ep-1", "")
		ds, _ := ev["deliveries"].([]any)
		return len(ds) == 1 && jpath(ds[0], "status") == "delivered"
	})
	code, ep := call(t, e, http.MethodGet, "/v1/endpoints/"+id, "")
	if code != http.StatusOK || ep["id"] != id || ep["url"] != rcv.URL+"/hooks" || ep["state"] != "enabled" ||
		ep["attempts"] != float64(1) || ep["failures"] != float64(0) || ep["consecutive_failures"] != float64(0) ||
		ep["last_success_at"] == nil || jpath(ep, "window", "seconds") != float64(86400) ||
		jpath(ep, "window", "attempts") != float64(1) || jpath(ep, "window", "failures") != float64(0) {
		t.Fatalf("GET endpoint: %d %v", code, ep)
	}
	if cs, ok := ep["changes"].([]any); !ok || len(cs) != 0 {
		t.Fatalf("changes of a new endpoint: %v, want []", ep["changes"])
	}
	code, body := call(t, e, http.MethodPost, "/v1/endpoints/"+id+"/unfreeze", "")
	wantError(t, "unfreeze enabled", code, body, http.StatusConflict, "")
	code, body = call(t, e, http.MethodPost, "/v1/endpoints/"+id+"/disable", `{"reason":5}`)
	wantError(t, "disable with a bad reason", code, body, http.StatusBadRequest, "reason")
	code, body = call(t, e, http.MethodPost, "/v1/endpoints/"+id+"/disable", `{"reason":"maintenance window"}`)
	if code != http.StatusAccepted || body["signal"] != "disable" || body["endpoint_id"] != id {
		t.Fatalf("disable: %d %v", code, body)
	}
	ep = waitState(t, e, id, "disabled", 1)
	if ch := changes(ep)[0]; ch["from"] != "enabled" || ch["to"] != "disabled" || ch["reason"] != "maintenance window" || ch["changed_at"] == nil {
		t.Fatalf("disable recorded as %v", ch)
	}
	code, body = call(t, e, http.MethodPost, "/v1/endpoints/"+id+"/unfreeze", "")
	wantError(t, "unfreeze disabled", code, body, http.StatusConflict, "")
	if msg := str(jpath(body, "error", "message")); !strings.Contains(msg, "disabled") {
		t.Errorf("unfreeze message %q does not say the state", msg)
	}
	if code, body = call(t, e, http.MethodPost, "/v1/endpoints/"+id+"/enable", ""); code != http.StatusAccepted {
		t.Fatalf("enable: %d %v", code, body)
	}
	ep = waitState(t, e, id, "enabled", 2)
	if ch := changes(ep)[1]; ch["from"] != "disabled" || ch["to"] != "enabled" || ch["reason"] != "enabled by operator" {
		t.Fatalf("enable recorded as %v", ch)
	}
}

// TestEndpointHealthAndIsolation: out-of-range thresholds are a 400 naming
// the field that changes nothing; unknown ids are 404; another account never
// sees, signals or changes this account's endpoint.
func TestEndpointHealthAndIsolation(t *testing.T) {
	t.Parallel()
	st, c := testenvStore(t), testenvClient(t)
	e := testAPI(t, st, c)
	runWorker(t, st, c)
	id := endpointOf(t, e, c, "", "https://default.example/hook")
	bad := []struct{ name, body, field string }{
		{"window too short", `{"window_seconds":59}`, "window_seconds"},
		{"window too long", `{"window_seconds":2592001}`, "window_seconds"},
		{"rate over 1", `{"disable_failure_rate":1.5}`, "disable_failure_rate"},
		{"negative rate", `{"disable_failure_rate":-0.1}`, "disable_failure_rate"},
		{"probe negative", `{"probe_interval_seconds":-1}`, "probe_interval_seconds"},
		{"negative attempts", `{"disable_min_attempts":-1}`, "disable_min_attempts"},
		{"freeze count too big", `{"freeze_always_after":1073741825}`, "freeze_always_after"},
		{"wrong type", `{"window_seconds":"60"}`, "window_seconds"},
		{"unknown field", `{"window_seconds":60,"colour":"red"}`, "colour"},
		{"malformed", `{"window_seconds":`, ""},
	}
	for _, tc := range bad {
		code, body := call(t, e, http.MethodPut, "/v1/endpoints/"+id+"/health", tc.body)
		wantError(t, tc.name, code, body, http.StatusBadRequest, tc.field)
	}
	stored, err := st.GetEndpoint(context.Background(), store.DefaultAccount, id)
	if err != nil || (len(stored.Health) != 0 && string(stored.Health) != "{}") {
		t.Fatalf("health after bad input: %s %v", stored.Health, err)
	}
	if _, ep := call(t, e, http.MethodGet, "/v1/endpoints/"+id, ""); jpath(ep, "window", "seconds") != float64(86400) {
		t.Fatalf("window after bad input: %v", ep)
	}
	for _, p := range []string{"", "/disable", "/enable", "/unfreeze", "/health"} {
		method := map[bool]string{true: http.MethodGet, false: http.MethodPost}[p == ""]
		if p == "/health" {
			method = http.MethodPut
		}
		code, body := call(t, e, method, "/v1/endpoints/ep_nope"+p, `{"window_seconds":3600}`)
		wantError(t, method+" unknown endpoint"+p, code, body, http.StatusNotFound, "")
	}
	// Another account: 404 for this endpoint, never its data or a change.
	_, acct, raw := callAs(t, e, http.MethodPost, "/accounts", "", `{"name":"other"}`)
	other := str(acct["authorization"])
	if other == "" {
		t.Fatalf("POST /accounts: %s", raw)
	}
	for _, r := range []struct{ method, path, body string }{
		{http.MethodGet, "", ""}, {http.MethodPost, "/disable", `{"reason":"hostile"}`},
		{http.MethodPut, "/health", `{"window_seconds":3600}`},
	} {
		code, body, raw := callAs(t, e, r.method, "/v1/endpoints/"+id+r.path, other, r.body)
		wantError(t, "other account "+r.method+r.path, code, body, http.StatusNotFound, "")
		if strings.Contains(raw, "default.example") {
			t.Errorf("other account sees %s", raw)
		}
	}
	code, body, _ := callAs(t, e, http.MethodGet, "/v1/endpoints/"+id, "User x, Organization y", "")
	wantError(t, "bad credentials", code, body, http.StatusUnauthorized, "Authorization")
	theirs := endpointOf(t, e, c, other, "https://other.example/hook")
	if code, body, _ := callAs(t, e, http.MethodGet, "/v1/endpoints/"+theirs, other, ""); code != http.StatusOK || body["url"] != "https://other.example/hook" {
		t.Fatalf("own endpoint: %d %v", code, body)
	}
	code, body, raw = callAs(t, e, http.MethodGet, "/v1/endpoints/"+theirs, "", "")
	wantError(t, "default account on the other's endpoint", code, body, http.StatusNotFound, "")
	if strings.Contains(raw, "other.example") {
		t.Errorf("default account sees %s", raw)
	}
	if ep, _ := st.GetEndpoint(context.Background(), store.DefaultAccount, id); ep.State != "enabled" || (len(ep.Health) != 0 && string(ep.Health) != "{}") {
		t.Fatalf("the other account changed the endpoint: %+v", ep)
	}
	// A valid override is stored and shapes the window.
	if code, body := call(t, e, http.MethodPut, "/v1/endpoints/"+id+"/health", `{"window_seconds":3600}`); code != http.StatusOK {
		t.Fatalf("valid health: %d %v", code, body)
	}
	if _, ep := call(t, e, http.MethodGet, "/v1/endpoints/"+id, ""); jpath(ep, "window", "seconds") != float64(3600) {
		t.Fatalf("window after the override: %v", ep)
	}
}
