package api

import (
	"fmt"
	"net/http"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
)

// TestDeadLettersListRedriveRetry: an event answered 400 under the Event Grid
// policy with dead-lettering on is dead-lettered at once (docs/policies.md#eventgrid);
// the dead letters list filters and paginates; a redrive is a
// fresh delivery linked to the dead one that reaches the receiver; a finished
// delivery can be retried now. Real Temporal, PostgreSQL and receiver.
func TestDeadLettersListRedriveRetry(t *testing.T) {
	t.Parallel()
	st := testenvStore(t)
	c := testenvClient(t)
	e := testAPI(t, st, c)
	runWorker(t, st, c)
	var healthy atomic.Bool
	rcv := newReceiver(t)
	rcv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if !healthy.Load() {
			w.WriteHeader(http.StatusBadRequest)
		}
	})
	_, sub := call(t, e, http.MethodPost, "/v1/subscriptions", mustJSON(t, map[string]any{
		"url": rcv.URL, "event_types": []string{"dl.test"}, "policy": "eventgrid",
		"retry_policy": map[string]any{"dead_lettering": true}}))
	for i := 1; i <= 2; i++ {
		call(t, e, http.MethodPost, "/v1/events", fmt.Sprintf(`{"id":"dl-%d","type":"dl.test"}`, i))
	}
	var list map[string]any
	waitFor(t, "two dead letters", 30*time.Second, func() bool {
		_, list = call(t, e, http.MethodGet, "/v1/dead-letters", "")
		return len(list["dead_letters"].([]any)) == 2
	})
	// The two deliveries run at once: either may be dead-lettered first.
	var first map[string]any
	for _, l := range list["dead_letters"].([]any) {
		if l.(map[string]any)["event_id"] == "dl-1" {
			first = l.(map[string]any)
		}
	}
	if first == nil || first["reason"] != "Undeliverable: HTTP 400" || first["last_status_code"] != float64(400) ||
		first["attempts"] != float64(1) || first["event_id"] != "dl-1" {
		t.Fatalf("dead letter: %v", first)
	}
	assertDeadLetterFilters(t, e, sub["id"].(string), sub["endpoint_id"].(string))
	healthy.Store(true)
	code, fresh := call(t, e, http.MethodPost, "/v1/dead-letters/"+first["id"].(string)+"/redrive", "")
	if code != http.StatusAccepted || fresh["previous_id"] != first["delivery_id"] {
		t.Fatalf("redrive: %d %v", code, fresh)
	}
	freshID := fresh["id"].(string)
	waitDelivered(t, e, freshID)
	_, dl := call(t, e, http.MethodGet, "/v1/dead-letters/"+first["id"].(string), "")
	if dl["redrive_delivery_id"] != freshID || dl["redriven_at"] == nil {
		t.Fatalf("dead letter after redrive: %v", dl)
	}
	if code, body := call(t, e, http.MethodPost, "/v1/deliveries/"+freshID+"/retry", ""); code != http.StatusAccepted {
		t.Fatalf("retry of a delivered delivery: %d %v", code, body)
	} else {
		waitDelivered(t, e, body["id"].(string))
	}
}

func waitDelivered(t *testing.T, e *echo.Echo, id string) {
	t.Helper()
	waitFor(t, "delivery "+id+" delivered", 30*time.Second, func() bool {
		_, d := call(t, e, http.MethodGet, "/v1/deliveries/"+id, "")
		return d["status"] == "delivered" && len(d["attempt_list"].([]any)) == 1
	})
}

// assertDeadLetterFilters checks the list's filters, its pagination and its
// 400s.
func assertDeadLetterFilters(t *testing.T, e *echo.Echo, subID, endpointID string) {
	t.Helper()
	future := url.QueryEscape(time.Now().Add(time.Hour).Format(time.RFC3339))
	counts := map[string]int{
		"?subscription_id=" + subID:    2,
		"?subscription_id=sub_nope":    0,
		"?endpoint_id=" + endpointID:   2,
		"?since=" + future:             0,
		"?until=" + future:             2,
		"?endpoint_id=ep_nope&limit=5": 0,
	}
	for q, want := range counts {
		_, body := call(t, e, http.MethodGet, "/v1/dead-letters"+q, "")
		if got := len(body["dead_letters"].([]any)); got != want {
			t.Errorf("GET /v1/dead-letters%s: %d, want %d", q, got, want)
		}
	}
	_, page1 := call(t, e, http.MethodGet, "/v1/dead-letters?limit=1", "")
	cursor, _ := page1["next_cursor"].(string)
	_, page2 := call(t, e, http.MethodGet, "/v1/dead-letters?limit=1&cursor="+cursor, "")
	p1, p2 := page1["dead_letters"].([]any), page2["dead_letters"].([]any)
	if cursor == "" || len(p1) != 1 || len(p2) != 1 || p1[0].(map[string]any)["id"] == p2[0].(map[string]any)["id"] {
		t.Errorf("pagination: %v then %v", page1, page2)
	}
	for _, q := range []string{"?since=yesterday", "?limit=0", "?limit=x", "?until=2026-13-01"} {
		if code, body := call(t, e, http.MethodGet, "/v1/dead-letters"+q, ""); code != http.StatusBadRequest {
			t.Errorf("GET /v1/dead-letters%s: %d %v, want 400", q, code, body)
		}
	}
}
