package api

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
)

// subscribeFixed subscribes url to type "rp" under a custom policy retrying
// every second, and returns the subscription's endpoint id.
func subscribeFixed(t *testing.T, e *echo.Echo, url string) string {
	t.Helper()
	code, sub := call(t, e, http.MethodPost, "/v1/subscriptions", `{"url": "`+url+`", "event_types": ["rp"],
		"policy": "custom", "retry_policy": {"custom": {"kind": "fixed", "interval_seconds": 1}, "max_attempts": 5}}`)
	if code != http.StatusCreated {
		t.Fatalf("subscribe: %d %v", code, sub)
	}
	return str(sub["endpoint_id"])
}

// TestRetryAfterPushesTheRetryBack: a 503 with Retry-After: 3 under a
// one-second schedule makes the next attempt come 3 s later (issue 16).
func TestRetryAfterPushesTheRetryBack(t *testing.T) {
	t.Parallel()
	st, c := testenvStore(t), testenvClient(t)
	e := testAPI(t, st, c)
	runWorker(t, st, c)
	var mu sync.Mutex
	var arrivals []time.Time
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		arrivals = append(arrivals, time.Now())
		if len(arrivals) == 1 {
			w.Header().Set("Retry-After", "3")
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(rcv.Close)
	subscribeFixed(t, e, rcv.URL)
	code, pub := call(t, e, http.MethodPost, "/v1/events", `{"type": "rp", "data": {}}`)
	if code != http.StatusAccepted {
		t.Fatalf("publish: %d %v", code, pub)
	}
	id := str(pub["deliveries"].([]any)[0].(map[string]any)["id"])
	waitFor(t, "the delivery", 30*time.Second, func() bool {
		_, d := call(t, e, http.MethodGet, "/v1/deliveries/"+id, "")
		return d["status"] == "delivered"
	})
	as, err := st.Attempts(context.Background(), id)
	if err != nil || len(as) != 2 {
		t.Fatalf("attempts %+v %v, want 2", as, err)
	}
	mu.Lock()
	gap := arrivals[1].Sub(arrivals[0])
	mu.Unlock()
	if planned := as[1].ScheduledAt.Sub(as[0].StartedAt); planned < 3*time.Second || gap < 3*time.Second {
		t.Fatalf("second attempt planned %v and made %v after the first; want at least the 3 s asked", planned, gap)
	}
}

// TestConcurrencyCap: with max_concurrency 2, a receiver never sees more
// than 2 concurrent requests from 50 waiting deliveries, and being held
// back is not an attempt: each delivery is made once (issue 16).
func TestConcurrencyCap(t *testing.T) {
	t.Parallel()
	st, c := testenvStore(t), testenvClient(t)
	e := testAPI(t, st, c)
	runWorker(t, st, c)
	var now, most, seen atomic.Int64
	rcv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		n := now.Add(1)
		defer now.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(100 * time.Millisecond)
		seen.Add(1)
	}))
	t.Cleanup(rcv.Close)
	ep := subscribeFixed(t, e, rcv.URL)
	if code, out := call(t, e, http.MethodPut, "/v1/endpoints/"+ep+"/limits", `{"max_concurrency": 2}`); code != http.StatusOK {
		t.Fatalf("set limits: %d %v", code, out)
	}
	for i := range 50 {
		if code, out := call(t, e, http.MethodPost, "/v1/events", fmt.Sprintf(`{"type": "rp", "data": {"n": %d}}`, i)); code != http.StatusAccepted {
			t.Fatalf("publish: %d %v", code, out)
		}
	}
	waitFor(t, "50 deliveries", 40*time.Second, func() bool { return seen.Load() >= 50 })
	var attempts, delivered int
	err := st.DB().QueryRow(`SELECT (SELECT count(*) FROM attempts a JOIN deliveries d ON d.id = a.delivery_id
			JOIN subscriptions s ON s.id = d.subscription_id WHERE s.endpoint_id = $1),
		(SELECT count(*) FROM deliveries d JOIN subscriptions s ON s.id = d.subscription_id
			WHERE s.endpoint_id = $1 AND d.status = 'delivered' AND d.attempts = 1)`, ep).Scan(&attempts, &delivered)
	if err != nil {
		t.Fatal(err)
	}
	if most.Load() > 2 || seen.Load() != 50 || attempts != 50 {
		t.Fatalf("most concurrent %d, requests %d, attempts %d; want at most 2, 50, 50", most.Load(), seen.Load(), attempts)
	}
	waitFor(t, "50 delivered", 30*time.Second, func() bool {
		_ = st.DB().QueryRow(`SELECT count(*) FROM deliveries d JOIN subscriptions s ON s.id = d.subscription_id
			WHERE s.endpoint_id = $1 AND d.status = 'delivered' AND d.attempts = 1`, ep).Scan(&delivered)
		return delivered == 50
	})
}

// TestEndpointLimitsAPI: PUT /v1/endpoints/{id}/limits checks its fields,
// changes nothing on a bad one, and GET shows what is in force.
func TestEndpointLimitsAPI(t *testing.T) {
	t.Parallel()
	st, c := testenvStore(t), testenvClient(t)
	e := testAPI(t, st, c)
	ep := subscribeFixed(t, e, "http://127.0.0.1:1/limits")
	path := "/v1/endpoints/" + ep + "/limits"
	code, out := call(t, e, http.MethodPut, path, `{"max_concurrency": 3, "rate_limit": 10, "rate_limit_period_seconds": 60}`)
	if code != http.StatusOK {
		t.Fatalf("set: %d %v", code, out)
	}
	for body, field := range map[string]string{
		`{"max_concurrency": 0}`:              "max_concurrency",
		`{"max_concurrency": 1001}`:           "max_concurrency",
		`{"max_concurrency": "2"}`:            "max_concurrency",
		`{"rate_limit": -1}`:                  "rate_limit",
		`{"rate_limit": 1.5}`:                 "rate_limit",
		`{"rate_limit_period_seconds": 0}`:    "rate_limit_period_seconds",
		`{"rate_limit_period_seconds": 1e10}`: "rate_limit_period_seconds",
	} {
		code, out := call(t, e, http.MethodPut, path, body)
		wantError(t, body, code, out, http.StatusBadRequest, field)
	}
	if code, _ := call(t, e, http.MethodPut, "/v1/endpoints/ep_nope/limits", `{}`); code != http.StatusNotFound {
		t.Errorf("unknown endpoint: %d", code)
	}
	_, got := call(t, e, http.MethodGet, "/v1/endpoints/"+ep, "")
	want := map[string]any{"max_concurrency": 3.0, "rate_limit": 10.0, "rate_limit_period_seconds": 60.0}
	if fmt.Sprint(got["limits"]) != fmt.Sprint(want) {
		t.Fatalf("limits after bad requests %v, want %v", got["limits"], want)
	}
	call(t, e, http.MethodPut, path, `{}`)
	_, got = call(t, e, http.MethodGet, "/v1/endpoints/"+ep, "")
	if fmt.Sprint(got["limits"]) != fmt.Sprint(map[string]any{"max_concurrency": nil, "rate_limit": nil, "rate_limit_period_seconds": 1.0}) {
		t.Fatalf("limits removed: %v", got["limits"])
	}
}
