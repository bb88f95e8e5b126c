package api

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
)

// TestRecoverWindowOnce: issue 16. Under the Event Grid policy a 400 ends a
// delivery at once, dead-lettered where dead-lettering is on, else dropped.
// Four events fail at two subscriptions to one endpoint (and at a third
// endpoint); a subscription's recovery, then the endpoint's, a bounded
// call at a time, redrive exactly the dead and dropped deliveries that
// ended in the window, once each: a further call redrives nothing, and the
// fresh deliveries reach the receiver. Real Temporal, PostgreSQL and
// receivers.
func TestRecoverWindowOnce(t *testing.T) {
	t.Parallel()
	st := testenvStore(t)
	c := testenvClient(t)
	e := testAPI(t, st, c)
	runWorker(t, st, c)
	var healthy atomic.Bool
	var got atomic.Int64
	rcv := newReceiver(t)
	rcv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if !healthy.Load() {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		got.Add(1)
	})
	other := newReceiver(t, http.StatusBadRequest, http.StatusBadRequest, http.StatusBadRequest, http.StatusBadRequest)
	sub := func(url string, dl bool) map[string]any {
		_, s := call(t, e, http.MethodPost, "/v1/subscriptions", mustJSON(t, map[string]any{
			"url": url, "event_types": []string{"rc.test"}, "policy": "eventgrid",
			"retry_policy": map[string]any{"dead_lettering": dl}}))
		return s
	}
	dlSub, dropSub, _ := sub(rcv.URL, true), sub(rcv.URL, false), sub(other.URL, true)
	if dlSub["endpoint_id"] != dropSub["endpoint_id"] {
		t.Fatalf("two subscriptions to one URL, two endpoints: %v %v", dlSub, dropSub)
	}
	ended := map[string][]map[string]any{}
	for i := 1; i <= 4; i++ {
		ended[fmt.Sprint(i)] = publishFailed(t, e, fmt.Sprintf("rc-%d", i), 3)
	}
	// The window holds events 2 and 3: after every ending of event 1, up to
	// the first of event 4 (until is exclusive).
	since := lastEnding(t, ended["1"]).Add(time.Microsecond)
	until := firstEnding(t, ended["4"])
	window := fmt.Sprintf(`"since": %q, "until": %q`, since.Format(time.RFC3339Nano), until.Format(time.RFC3339Nano))
	wantPrev := idsOf(ended["2"], ended["3"], dlSub["endpoint_id"].(string))
	assertRecoverRefusals(t, e, "/v1/endpoints/"+dlSub["endpoint_id"].(string)+"/recover")
	healthy.Store(true)

	var fresh []string
	fresh = append(fresh, recoverCall(t, e, "/v1/subscriptions/"+dropSub["id"].(string)+"/recover", "{"+window+"}", 2, false)...)
	epPath := "/v1/endpoints/" + dlSub["endpoint_id"].(string) + "/recover"
	fresh = append(fresh, recoverCall(t, e, epPath, "{"+window+`, "limit": 1}`, 1, true)...)
	fresh = append(fresh, recoverCall(t, e, epPath, "{"+window+`, "limit": 1}`, 1, false)...)
	recoverCall(t, e, epPath, "{"+window+"}", 0, false)
	recoverCall(t, e, "/v1/subscriptions/"+dlSub["id"].(string)+"/recover", "{"+window+"}", 0, false)
	var prevs []string
	for _, id := range fresh {
		waitDelivered(t, e, id)
		_, d := call(t, e, http.MethodGet, "/v1/deliveries/"+id, "")
		prevs = append(prevs, d["previous_id"].(string))
	}
	sort.Strings(prevs)
	if strings.Join(prevs, ",") != strings.Join(wantPrev, ",") {
		t.Fatalf("redriven %v, want the window's %v", prevs, wantPrev)
	}
	if n := got.Load(); n != 4 {
		t.Fatalf("receiver got %d deliveries, want 4", n)
	}
	recoverCall(t, e, epPath, `{"since": "2000-01-01T00:00:00Z"}`, 4, false) // events 1 and 4: outside the window
	assertDeadLetterRedriven(t, e, dlSub["id"].(string), wantPrev)
}

// publishFailed publishes an event of type rc.test and waits until its n
// deliveries have ended undelivered; it returns them.
func publishFailed(t *testing.T, e *echo.Echo, id string, n int) []map[string]any {
	t.Helper()
	if code, body := call(t, e, http.MethodPost, "/v1/events", `{"id": "`+id+`", "type": "rc.test"}`); code != http.StatusAccepted {
		t.Fatalf("publish %s: %d %v", id, code, body)
	}
	var ds []map[string]any
	waitFor(t, id+" undelivered", 30*time.Second, func() bool {
		_, ev := call(t, e, http.MethodGet, "/v1/events/"+id, "")
		ds = ds[:0]
		for _, d := range ev["deliveries"].([]any) {
			if s := d.(map[string]any)["status"]; s == "dead_lettered" || s == "dropped" {
				ds = append(ds, d.(map[string]any))
			}
		}
		return len(ds) == n
	})
	return ds
}

func endingOf(t *testing.T, d map[string]any) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, d["finished_at"].(string))
	if err != nil {
		t.Fatalf("finished_at of %v: %v", d, err)
	}
	return at
}

func lastEnding(t *testing.T, ds []map[string]any) time.Time {
	var last time.Time
	for _, d := range ds {
		if at := endingOf(t, d); at.After(last) {
			last = at
		}
	}
	return last
}

func firstEnding(t *testing.T, ds []map[string]any) time.Time {
	first := endingOf(t, ds[0])
	for _, d := range ds {
		if at := endingOf(t, d); at.Before(first) {
			first = at
		}
	}
	return first
}

// idsOf are the sorted ids of the deliveries of a and b to endpointID.
func idsOf(a, b []map[string]any, endpointID string) []string {
	var ids []string
	for _, d := range append(append([]map[string]any{}, a...), b...) {
		if d["endpoint_id"] == endpointID {
			ids = append(ids, d["id"].(string))
		}
	}
	sort.Strings(ids)
	return ids
}

// recoverCall posts a recovery and checks how many it redrove and its more;
// it returns the fresh deliveries' ids.
func recoverCall(t *testing.T, e *echo.Echo, path, body string, n int, more bool) []string {
	t.Helper()
	code, got := call(t, e, http.MethodPost, path, body)
	ids, _ := got["delivery_ids"].([]any)
	if code != http.StatusOK || got["redriven"] != float64(n) || len(ids) != n || got["more"] != more {
		t.Fatalf("POST %s %s: %d %v, want %d redriven, more %v", path, body, code, got, n, more)
	}
	out := make([]string, n)
	for i, id := range ids {
		out[i] = id.(string)
	}
	return out
}

// assertRecoverRefusals: bad bodies are 400s naming the field and change
// nothing; an unknown endpoint or subscription is a 404.
func assertRecoverRefusals(t *testing.T, e *echo.Echo, path string) {
	t.Helper()
	bad := map[string]string{
		`{}`: "since", `{"since": "yesterday"}`: "since", `{"since": "2026-01-01T00:00:00Z", "until": "x"}`: "until",
		`{"since": "2026-01-02T00:00:00Z", "until": "2026-01-01T00:00:00Z"}`: "until",
		`{"since": "2026-01-01T00:00:00Z", "limit": 0}`:                      "limit",
		`{"since": "2026-01-01T00:00:00Z", "limit": 1001}`:                   "limit",
		`{"since": "2026-01-01T00:00:00Z", "max": 1}`:                        "max",
	}
	for body, field := range bad {
		if code, got := call(t, e, http.MethodPost, path, body); code != http.StatusBadRequest || jpath(got, "error", "field") != field {
			t.Errorf("POST %s %s: %d %v, want 400 naming %s", path, body, code, got, field)
		}
	}
	for _, p := range []string{"/v1/endpoints/ep_nope/recover", "/v1/subscriptions/sub_nope/recover"} {
		if code, got := call(t, e, http.MethodPost, p, `{"since": "2026-01-01T00:00:00Z"}`); code != http.StatusNotFound {
			t.Errorf("POST %s: %d %v, want 404", p, code, got)
		}
	}
}

// assertDeadLetterRedriven: the dead letters of the recovered deliveries
// show their redrive, as after POST /v1/dead-letters/{id}/redrive.
func assertDeadLetterRedriven(t *testing.T, e *echo.Echo, subID string, recovered []string) {
	t.Helper()
	_, list := call(t, e, http.MethodGet, "/v1/dead-letters?subscription_id="+subID, "")
	n := 0
	for _, l := range list["dead_letters"].([]any) {
		l := l.(map[string]any)
		for _, id := range recovered {
			if l["delivery_id"] == id {
				n++
				if l["redrive_delivery_id"] == nil || l["redriven_at"] == nil {
					t.Errorf("dead letter of recovered %s: %v", id, l)
				}
			}
		}
	}
	if n != 2 {
		t.Errorf("%d dead letters of recovered deliveries, want 2: %v", n, list)
	}
}
