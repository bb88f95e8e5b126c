package api

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
)

// TestBadInputStoresNothing: malformed JSON, unknown fields, a missing type,
// an invalid URL or an unknown policy get a 400 in the one error shape, naming
// the field, and store nothing.
func TestBadInputStoresNothing(t *testing.T) {
	t.Parallel()
	st := testenvStore(t)
	e := testAPI(t, st, nil)
	cases := []struct {
		name, path, body, field, code string
	}{
		{"malformed subscription", "/v1/subscriptions", `{"url": "http://x.test/",`, "", "invalid_request"},
		{"empty body", "/v1/subscriptions", ``, "", "invalid_request"},
		{"unknown field", "/v1/subscriptions", `{"url":"http://x.test/","event_types":["a"],"colour":"red"}`, "colour", "invalid_request"},
		{"invalid url", "/v1/subscriptions", `{"url":"ftp://x.test/","event_types":["a"]}`, "url", "invalid_request"},
		{"relative url", "/v1/subscriptions", `{"url":"/hooks","event_types":["a"]}`, "url", "invalid_request"},
		{"missing url", "/v1/subscriptions", `{"event_types":["a"]}`, "url", "invalid_request"},
		{"no event types", "/v1/subscriptions", `{"url":"http://x.test/"}`, "event_types", "invalid_request"},
		{"unknown policy", "/v1/subscriptions", `{"url":"http://x.test/","event_types":["a"],"policy":"carrier-pigeon"}`, "policy", "unknown_policy"},
		{"out of range", "/v1/subscriptions", `{"url":"http://x.test/","event_types":["a"],"policy":"eventgrid","retry_policy":{"max_attempts":31}}`, "retry_policy.max_attempts", "invalid_request"},
		{"wrong type", "/v1/subscriptions", `{"url":"http://x.test/","event_types":"a"}`, "event_types", "invalid_request"},
		{"malformed event", "/v1/events", `{"type": }`, "", "invalid_request"},
		{"missing type", "/v1/events", `{"data":{"a":1}}`, "type", "invalid_request"},
		{"blank type", "/v1/events", `{"type":"  "}`, "type", "invalid_request"},
		{"unknown event field", "/v1/events", `{"type":"a","payload":{}}`, "payload", "invalid_request"},
		{"two objects", "/v1/events", `{"type":"a"}{"type":"b"}`, "", "invalid_request"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, body := call(t, e, http.MethodPost, tc.path, tc.body)
			if code != http.StatusBadRequest {
				t.Fatalf("status %d, want 400: %v", code, body)
			}
			errObj, _ := body["error"].(map[string]any)
			if errObj == nil || errObj["message"] == "" || errObj["code"] != tc.code {
				t.Fatalf("error shape: %v, want code %q", body, tc.code)
			}
			if got, _ := errObj["field"].(string); got != tc.field {
				t.Errorf("field %q, want %q (%v)", got, tc.field, errObj["message"])
			}
		})
	}
	for _, table := range []string{"subscriptions", "endpoints", "events", "deliveries", "attempts"} {
		var n int
		if err := st.DB().Get(&n, "SELECT count(*) FROM "+table); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%s has %d rows after bad input, want 0", table, n)
		}
	}
}

// TestNotFoundShape: unknown ids get a 404 in the same shape.
func TestNotFoundShape(t *testing.T) {
	t.Parallel()
	e := testAPI(t, testenvStore(t), nil)
	for _, path := range []string{"/v1/events/nope", "/v1/subscriptions/nope", "/v1/deliveries/nope", "/v1/dead-letters/nope", "/v1/policies/nope"} {
		code, body := call(t, e, http.MethodGet, path, "")
		errObj, _ := body["error"].(map[string]any)
		if code != http.StatusNotFound || errObj["code"] != "not_found" {
			t.Errorf("GET %s: %d %v, want 404 not_found", path, code, body)
		}
	}
}

// TestPublishDelivers: the thin path end to end, on a real Temporal dev server,
// a real PostgreSQL and a real receiver: subscribe, publish, the receiver gets
// the event, the attempt is recorded, and publishing the same id again
// delivers nothing new.
func TestPublishDelivers(t *testing.T) {
	t.Parallel()
	st := testenvStore(t)
	c := testenvClient(t)
	e := testAPI(t, st, c)
	runWorker(t, st, c)
	rcv := newReceiver(t)
	code, sub := call(t, e, http.MethodPost, "/v1/subscriptions",
		mustJSON(t, map[string]any{"url": rcv.URL + "/hooks", "event_types": []string{"order.created"}, "policy": "eventgrid"}))
	if code != http.StatusCreated {
		t.Fatalf("subscribe: %d %v", code, sub)
	}
	event := `{"id":"ord-1","type":"order.created","data":{"order":1}}`
	if code, body := call(t, e, http.MethodPost, "/v1/events", event); code != http.StatusAccepted || body["duplicate"] != false {
		t.Fatalf("publish: %d %v", code, body)
	}
	var ev map[string]any
	waitFor(t, "delivered", 30*time.Second, func() bool {
		_, ev = call(t, e, http.MethodGet, "/v1/events/ord-1", "")
		ds, _ := ev["deliveries"].([]any)
		return len(ds) == 1 && ds[0].(map[string]any)["status"] == "delivered"
	})
	d := ev["deliveries"].([]any)[0].(map[string]any)
	attempts := d["attempt_list"].([]any)
	if len(attempts) != 1 || attempts[0].(map[string]any)["status_code"] != float64(200) {
		t.Fatalf("attempts: %v", attempts)
	}
	var got map[string]any
	if err := json.Unmarshal(rcv.received()[0], &got); err != nil || got["id"] != "ord-1" || got["type"] != "order.created" {
		t.Fatalf("receiver got %s (%v)", rcv.received()[0], err)
	}
	code, body := call(t, e, http.MethodPost, "/v1/events", event)
	if code != http.StatusOK || body["duplicate"] != true {
		t.Fatalf("republish: %d %v", code, body)
	}
	assertWorkflowDone(t, c, d["workflow_id"].(string))
	if n := len(rcv.received()); n != 1 {
		t.Fatalf("receiver got %d requests, want 1", n)
	}
}

func assertWorkflowDone(t *testing.T, c client.Client, id string) {
	t.Helper()
	var res map[string]any
	if err := c.GetWorkflow(context.Background(), id, "").Get(context.Background(), &res); err != nil {
		t.Fatalf("workflow %s: %v", id, err)
	}
	if res["Status"] != "delivered" {
		t.Fatalf("workflow %s ended %v", id, res)
	}
}

// TestReadyz: ready only when PostgreSQL and Temporal both answer.
func TestReadyz(t *testing.T) {
	t.Parallel()
	st := testenvStore(t)
	e := testAPI(t, st, testenvClient(t))
	if code, body := call(t, e, http.MethodGet, "/readyz", ""); code != http.StatusOK {
		t.Fatalf("readyz with both up: %d %v", code, body)
	}
	dead, err := client.NewLazyClient(client.Options{HostPort: "127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	defer dead.Close()
	e = testAPI(t, st, dead)
	code, body := call(t, e, http.MethodGet, "/readyz", "")
	checks, _ := body["checks"].(map[string]any)
	if code != http.StatusServiceUnavailable || checks["postgres"] != "ok" || checks["temporal"] == "ok" {
		t.Fatalf("readyz with Temporal down: %d %v", code, body)
	}
	if code, _ := call(t, e, http.MethodGet, "/healthz", ""); code != http.StatusOK {
		t.Fatalf("healthz: %d", code)
	}
}
