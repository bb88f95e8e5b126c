package api

import (
	"net/http"
	"testing"
)

// TestPatchAndDeleteSubscription: issue 16. PATCH changes the fields it
// names, with creation's validation and error shape (a bad patch changes
// nothing); active false pauses (new events queued) and true resumes; a new
// URL moves the subscription to that URL's endpoint; DELETE stops new
// deliveries and the subscription is gone.
func TestPatchAndDeleteSubscription(t *testing.T) {
	t.Parallel()
	e := testAPI(t, testenvStore(t), testenvClient(t))
	_, sub := call(t, e, http.MethodPost, "/v1/subscriptions", `{"url": "https://a.example/hook", "event_types": ["p.a"]}`)
	path := "/v1/subscriptions/" + sub["id"].(string)
	for body, field := range map[string]string{
		`{"url": "ftp://a.example/x"}`:             "url",
		`{"url": "http://169.254.169.254/latest"}`: "url",
		`{"policy": "nope"}`:                       "policy",
		`{"event_types": []}`:                      "event_types",
		`{"retry_policy": {"max_attempts": 0}}`:    "retry_policy.max_attempts",
		`{"colour": "red"}`:                        "colour",
	} {
		if code, got := call(t, e, http.MethodPatch, path, body); code != http.StatusBadRequest || jpath(got, "error", "field") != field {
			t.Errorf("PATCH %s: %d %v, want 400 naming %s", body, code, got, field)
		}
	}
	code, got := call(t, e, http.MethodPatch, path, `{"event_types": ["p.a", "p.b"], "retry_policy": {"max_attempts": 3}}`)
	if code != http.StatusOK || len(got["event_types"].([]any)) != 2 || got["policy"] != DefaultPolicy ||
		jpath(got, "retry_policy", "max_attempts") != 3.0 || got["url"] != "https://a.example/hook" || got["signing_secret"] != nil {
		t.Fatalf("PATCH event_types: %d %v", code, got)
	}
	_, paused := call(t, e, http.MethodPatch, path, `{"active": false}`)
	if _, pub := call(t, e, http.MethodPost, "/v1/events", `{"type": "p.b"}`); paused["active"] != false ||
		jpath(pub, "deliveries").([]any)[0].(map[string]any)["status"] != "queued" {
		t.Fatalf("paused: %v; publish %v", paused, pub)
	}
	_, moved := call(t, e, http.MethodPatch, path, `{"url": "https://b.example/hook", "active": true}`)
	if moved["endpoint_id"] == sub["endpoint_id"] || moved["active"] != true {
		t.Fatalf("new URL: %v (was endpoint %v)", moved, sub["endpoint_id"])
	}
	if code, _ := call(t, e, http.MethodDelete, path, ""); code != http.StatusNoContent {
		t.Fatalf("DELETE: %d", code)
	}
	if code, _ := call(t, e, http.MethodGet, path, ""); code != http.StatusNotFound {
		t.Fatalf("GET after DELETE: %d", code)
	}
	if _, pub := call(t, e, http.MethodPost, "/v1/events", `{"type": "p.a"}`); len(pub["deliveries"].([]any)) != 0 {
		t.Fatalf("a deleted subscription got a delivery: %v", pub)
	}
}
