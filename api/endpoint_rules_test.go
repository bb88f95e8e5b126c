package api

import (
	"context"
	"net/http"
	"reflect"
	"testing"

	"github.com/hookrelay/hookrelay/store"
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

// TestEndpointRulesStayPut: issue 53, item 3
// (docs/policies.md#endpoint-health-rules-belong-to-the-endpoint). An endpoint
// keeps the rules it took when it was made: PATCHing its first subscription to
// another policy or other retry_policy.health, moving that subscription to
// another URL, or deleting it leaves GET /v1/endpoints/{id}'s rules as they
// were. The moved subscription gives its rules to the endpoint it makes.
func TestEndpointRulesStayPut(t *testing.T) {
	t.Parallel()
	e := testAPI(t, testenvStore(t), testenvClient(t))
	const url, url2 = "https://stay.example/hook", "https://stay.example/other"
	_, a := call(t, e, http.MethodPost, "/v1/subscriptions", `{"url": "`+url+`", "event_types": ["a"], "policy": "workfront"}`)
	_, b := call(t, e, http.MethodPost, "/v1/subscriptions", `{"url": "`+url+`", "event_types": ["b"], "policy": "sap"}`)
	endpoint, first := a["endpoint_id"].(string), "/v1/subscriptions/"+a["id"].(string)
	rules := func(endpoint string) map[string]any {
		t.Helper()
		code, got := call(t, e, http.MethodGet, "/v1/endpoints/"+endpoint, "")
		if code != http.StatusOK {
			t.Fatalf("GET endpoint: %d %v", code, got)
		}
		r, _ := got["rules"].(map[string]any)
		return r
	}
	want := rules(endpoint)
	if want["disable_consecutive"] != 2000.0 || want["freeze_always_after"] != 50000.0 {
		t.Fatalf("workfront endpoint's rules %v", want)
	}
	patch := func(body string) map[string]any {
		t.Helper()
		code, got := call(t, e, http.MethodPatch, first, body)
		if code != http.StatusOK {
			t.Fatalf("PATCH %s: %d %v", body, code, got)
		}
		return got
	}
	same := func(step string) {
		t.Helper()
		if got := rules(endpoint); !reflect.DeepEqual(got, want) {
			t.Fatalf("after %s the endpoint's rules are %v, want %v", step, got, want)
		}
	}
	patch(`{"policy": "sap"}`)
	same("PATCHing its first subscription to sap")
	patch(`{"policy": "custom", "retry_policy": {"custom": {"kind": "fixed", "interval_seconds": 1},
		"health": {"disable_consecutive": 3}}}`)
	same("PATCHing its first subscription's retry_policy.health")
	moved := patch(`{"url": "` + url2 + `"}`)
	same("moving its first subscription to another URL")
	if moved["endpoint_id"] == endpoint || jpath(moved, "endpoint_rules", "disable_consecutive") != 3.0 {
		t.Fatalf("the moved subscription's new endpoint: %v %v", moved["endpoint_id"], moved["endpoint_rules"])
	}
	if code, _ := call(t, e, http.MethodDelete, "/v1/subscriptions/"+b["id"].(string), ""); code != http.StatusNoContent {
		t.Fatalf("DELETE: %d", code)
	}
	same("deleting its last subscription")
	endpoint2 := moved["endpoint_id"].(string)
	_, c := call(t, e, http.MethodPost, "/v1/subscriptions", `{"url": "`+url2+`", "event_types": ["c"], "policy": "workfront"}`)
	want = rules(endpoint2)
	if code, _ := call(t, e, http.MethodDelete, first, ""); code != http.StatusNoContent {
		t.Fatalf("DELETE: %d", code)
	}
	endpoint = endpoint2
	same("deleting its first subscription")
	if jpath(c, "endpoint_rules", "disable_consecutive") != 3.0 {
		t.Fatalf("a later subscription's endpoint_rules %v", c["endpoint_rules"])
	}
}

// TestEndpointRulesOfAnOlderEndpoint: an endpoint made before its rules were
// stored with it (no rules yet) takes its oldest subscription's on their first
// read, once: PATCHing that subscription afterwards changes nothing.
func TestEndpointRulesOfAnOlderEndpoint(t *testing.T) {
	t.Parallel()
	st := testenvStore(t)
	e := testAPI(t, st, testenvClient(t))
	sub := store.Subscription{AccountID: store.DefaultAccount, URL: "https://older.example/hook",
		EventTypes: []string{"a"}, Policy: "eventgrid", Active: true}
	if err := st.CreateSubscription(context.Background(), &sub); err != nil {
		t.Fatal(err)
	}
	if ep, err := st.EndpointByID(context.Background(), sub.EndpointID); err != nil || len(ep.Rules) != 0 {
		t.Fatalf("endpoint made without rules: %s %v", ep.Rules, err)
	}
	_, got := call(t, e, http.MethodGet, "/v1/endpoints/"+sub.EndpointID, "")
	if jpath(got, "rules", "disable_consecutive") != 10.0 {
		t.Fatalf("rules taken: %v", got["rules"])
	}
	if code, _ := call(t, e, http.MethodPatch, "/v1/subscriptions/"+sub.ID, `{"policy": "workfront"}`); code != http.StatusOK {
		t.Fatalf("PATCH: %d", code)
	}
	if _, got := call(t, e, http.MethodGet, "/v1/endpoints/"+sub.EndpointID, ""); jpath(got, "rules", "disable_consecutive") != 10.0 {
		t.Fatalf("rules after PATCH: %v", got["rules"])
	}
}
