package api

import (
	"net/http"
	"testing"
)

// TestWorkfrontPoliciesTimeout: GET /v1/policies/workfront and
// /v1/policies/workfront-legacy show the 5 s timeout of Adobe's Event
// Subscriptions FAQ (docs/policies.md#workfront).
func TestWorkfrontPoliciesTimeout(t *testing.T) {
	t.Parallel()
	e := testAPI(t, testenvStore(t), nil)
	for _, name := range []string{"workfront", "workfront-legacy"} {
		code, body := call(t, e, http.MethodGet, "/v1/policies/"+name, "")
		if code != http.StatusOK || body["timeout_seconds"] != 5.0 {
			t.Errorf("GET /v1/policies/%s: %d timeout_seconds %v, want 5", name, code, body["timeout_seconds"])
		}
	}
}
