package api

import (
	"net/http"
	"testing"
)

// TestEndpointRulesBelongToTheEndpoint:
// docs/policies.md#endpoint-health-rules-belong-to-the-endpoint (issue 11, item
// 3). The first subscription to a URL sets its endpoint's rules; a second
// subscription to the same URL with every rule off does not change them, and
// both subscriptions' answers and the endpoint's show the rules in force. PUT
// /v1/endpoints/{id}/health changes them.
func TestEndpointRulesBelongToTheEndpoint(t *testing.T) {
	t.Parallel()
	e := testAPI(t, testenvStore(t), testenvClient(t))
	const url = "https://rules.example/hook"
	_, a := call(t, e, http.MethodPost, "/v1/subscriptions", `{"url": "`+url+`", "event_types": ["a"], "policy": "custom",
		"retry_policy": {"custom": {"kind": "fixed", "interval_seconds": 1}, "health": {"disable_consecutive": 2}}}`)
	code, b := call(t, e, http.MethodPost, "/v1/subscriptions", `{"url": "`+url+`", "event_types": ["b"], "policy": "sap"}`)
	if code != http.StatusCreated || a["endpoint_id"] != b["endpoint_id"] {
		t.Fatalf("second subscription: %d %v (first %v)", code, b, a)
	}
	consecutive := func(v map[string]any, key string) any { return jpath(v, key, "disable_consecutive") }
	if consecutive(a, "endpoint_rules") != 2.0 || consecutive(b, "endpoint_rules") != 2.0 {
		t.Fatalf("rules shown: first %v, second %v; want the first's (2) on both", a["endpoint_rules"], b["endpoint_rules"])
	}
	endpoint := a["endpoint_id"].(string)
	if _, got := call(t, e, http.MethodGet, "/v1/endpoints/"+endpoint, ""); consecutive(got, "rules") != 2.0 {
		t.Fatalf("endpoint rules %v", got["rules"])
	}
	if code, _ := call(t, e, http.MethodPut, "/v1/endpoints/"+endpoint+"/health", `{"disable_consecutive": 7}`); code >= 300 {
		t.Fatalf("PUT health: %d", code)
	}
	if _, got := call(t, e, http.MethodGet, "/v1/subscriptions/"+b["id"].(string), ""); consecutive(got, "endpoint_rules") != 7.0 {
		t.Fatalf("after PUT: %v", got["endpoint_rules"])
	}
}
