package api

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/hookrelay/hookrelay/testenv"
)

// slowRetries retries every second, 100 times: long enough to block a
// sequence for the length of a test.
const slowRetries = `{"custom": {"kind": "fixed", "interval_seconds": 1}, "max_attempts": 100, "timeout_seconds": 5}`

// TestOrderedSkipReleasesSequence: issue 26. A sequence blocked on a
// failing delivery shows in GET /v1/subscriptions/{id}/sequences with that
// delivery and how many wait behind it, while another key goes on; an
// unordered subscription to the same endpoint is not held up by it (its
// events are delivered while the block lasts); skipping the blocking
// delivery dead-letters it with a reason and releases the rest, in order.
func TestOrderedSkipReleasesSequence(t *testing.T) {
	t.Parallel()
	_, e, rcv := orderedAPI(t, 0)
	rcv.Fail = func(ev testenv.OrderedEvent) bool { return ev.Key == "a" && ev.N == 1 }
	subID := subscribeOrdered(t, e, rcv.URL, "skip.ordered", slowRetries)
	call(t, e, http.MethodPost, "/v1/subscriptions", fmt.Sprintf(`{"url": %q, "event_types": ["skip.unordered"]}`, rcv.URL))
	ids := map[string]string{}
	for _, ev := range []string{"a/0", "a/1", "a/2", "a/3", "a/4", "b/0", "b/1", "b/2"} {
		key, n, _ := strings.Cut(ev, "/")
		ids[ev] = publishKeyed(t, e, "skip.ordered", key, n)
	}
	// The receiver sees b/2 a moment before its success is recorded: b's
	// sequence is gone once it is.
	waitFor(t, "b delivered and a blocked on a/1", time.Minute, func() bool {
		done, _ := rcv.Delivered("b")
		_, seqs := call(t, e, http.MethodGet, "/v1/subscriptions/"+subID+"/sequences", "")
		return done == 3 && deliveryOf(t, e, ids["a/1"])["attempts"].(float64) >= 2 && len(seqs["sequences"].([]any)) == 1
	})
	seq := onlySequence(t, e, subID)
	if seq["ordering_key"] != "a" || jpath(seq, "blocking_delivery", "id") != ids["a/1"] || seq["waiting"].(float64) != 3 ||
		jpath(seq, "blocking_delivery", "status") != "retrying" {
		t.Fatalf("sequence: %v, want a blocked on %s (retrying) with 3 waiting", seq, ids["a/1"])
	}
	for n := range 5 {
		publishKeyed(t, e, "skip.unordered", "", fmt.Sprint(n))
	}
	waitFor(t, "the unordered events", time.Minute, func() bool { return rcv.Unkeyed() == 5 })
	if d := deliveryOf(t, e, ids["a/1"]); d["status"] != "retrying" {
		t.Fatalf("a/1 is %v before the skip", d["status"])
	}
	rcv.Ended("a", 1) // what follows the skip may come
	code, skipped := call(t, e, http.MethodPost, "/v1/deliveries/"+ids["a/1"]+"/skip", "")
	if code != http.StatusOK || skipped["status"] != "dead_lettered" || skipped["final_reason"] != SkipReason {
		t.Fatalf("skip: %d %v", code, skipped)
	}
	waitFor(t, "a released", time.Minute, func() bool { done, _ := rcv.Delivered("a"); return done == 4 })
	if v := rcv.Violations(); len(v) > 0 {
		t.Fatalf("order violated:\n%s", strings.Join(v, "\n"))
	}
	// The receiver saw a/4 a moment before its attempt was recorded: the
	// sequence is gone once it is.
	waitFor(t, "no sequence left after the skip", 10*time.Second, func() bool {
		_, seqs := call(t, e, http.MethodGet, "/v1/subscriptions/"+subID+"/sequences", "")
		return len(seqs["sequences"].([]any)) == 0
	})
	_, dls := call(t, e, http.MethodGet, "/v1/dead-letters?subscription_id="+subID, "")
	if l, _ := dls["dead_letters"].([]any); len(l) != 1 || jpath(l[0], "reason") != SkipReason {
		t.Errorf("dead letters: %v", dls)
	}
	if code, _ := call(t, e, http.MethodPost, "/v1/deliveries/"+ids["a/1"]+"/skip", ""); code != http.StatusConflict {
		t.Errorf("second skip: %d, want 409", code)
	}
}

// publishKeyed publishes event n of key (none when "") with data {"key",
// "n"} and returns its one delivery's id.
func publishKeyed(t *testing.T, e *echo.Echo, typ, key, n string) string {
	t.Helper()
	code, pub := call(t, e, http.MethodPost, "/v1/events",
		fmt.Sprintf(`{"type": %q, "ordering_key": %q, "data": {"key": %q, "n": %s}}`, typ, key, key, n))
	ds, _ := pub["deliveries"].([]any)
	if code != http.StatusAccepted || len(ds) != 1 {
		t.Fatalf("publish %s/%s: %d %v", key, n, code, pub)
	}
	return jpath(ds[0], "id").(string)
}

// deliveryOf reads a delivery.
func deliveryOf(t *testing.T, e *echo.Echo, id string) map[string]any {
	t.Helper()
	code, d := call(t, e, http.MethodGet, "/v1/deliveries/"+id, "")
	if code != http.StatusOK {
		t.Fatalf("GET delivery %s: %d %v", id, code, d)
	}
	return d
}

// onlySequence reads a subscription's sequences, which must be one.
func onlySequence(t *testing.T, e *echo.Echo, subID string) map[string]any {
	t.Helper()
	code, got := call(t, e, http.MethodGet, "/v1/subscriptions/"+subID+"/sequences", "")
	seqs, _ := got["sequences"].([]any)
	if code != http.StatusOK || got["ordered"] != true || len(seqs) != 1 {
		t.Fatalf("sequences: %d %v, want one", code, got)
	}
	return seqs[0].(map[string]any)
}

// TestOrderedDisabledEndpointHolds: issue 26. A disabled endpoint holds
// every sequence of an ordered subscription (the first delivery of each
// waits, the rest behind it, and nothing reaches the receiver); enabling it
// resumes each in order. The policy's retry window (slowRetries: 100 s)
// outlasts the hold however slow the machine: with fastRetries' 3 s, a
// head that waited longer was rightly dead-lettered, and its key's next
// event went first.
func TestOrderedDisabledEndpointHolds(t *testing.T) {
	t.Parallel()
	st, e, rcv := orderedAPI(t, 0)
	subID := subscribeOrdered(t, e, rcv.URL, "held.ordered", slowRetries)
	_, sub := call(t, e, http.MethodGet, "/v1/subscriptions/"+subID, "")
	ep := sub["endpoint_id"].(string)
	if code, got := call(t, e, http.MethodPost, "/v1/endpoints/"+ep+"/disable", ""); code != http.StatusAccepted {
		t.Fatalf("disable: %d %v", code, got)
	}
	waitState(t, e, ep, "disabled", 1)
	if err := publishKeys(e, "held.ordered", 3, 4); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "every sequence held", time.Minute, func() bool {
		_, got := call(t, e, http.MethodGet, "/v1/subscriptions/"+subID+"/sequences", "")
		seqs, _ := got["sequences"].([]any)
		held := 0
		for _, s := range seqs {
			if jpath(s, "blocking_delivery", "status") == "waiting" && jpath(s, "waiting") == float64(3) {
				held++
			}
		}
		return held == 3
	})
	if n := rcv.Requests(); n != 0 {
		t.Fatalf("%d requests while the endpoint was disabled", n)
	}
	if code, got := call(t, e, http.MethodPost, "/v1/endpoints/"+ep+"/enable", ""); code != http.StatusAccepted {
		t.Fatalf("enable: %d %v", code, got)
	}
	waitSettled(t, st, subID, 12, time.Minute)
	if v := rcv.Violations(); len(v) > 0 {
		dumpSequences(t, st, subID)
		t.Fatalf("order violated:\n%s", strings.Join(v, "\n"))
	}
	checkRecordedOrder(t, st, subID)
}

// TestOrderedRecoverInOrder: issue 26. The failed deliveries of an ordered
// subscription, recovered, re-enter their sequences in their first order
// and are delivered so; a replayed event joins the end of its sequence.
func TestOrderedRecoverInOrder(t *testing.T) {
	t.Parallel()
	st, e, rcv := orderedAPI(t, 0)
	once := `{"custom": {"kind": "fixed", "interval_seconds": 0.05}, "max_attempts": 1, "timeout_seconds": 5}`
	subID := subscribeOrdered(t, e, "http://127.0.0.1:1/refused", "rec.ordered", once)
	since := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	if err := publishKeys(e, "rec.ordered", 2, 4); err != nil {
		t.Fatal(err)
	}
	waitSettled(t, st, subID, 8, time.Minute)
	call(t, e, http.MethodPatch, "/v1/subscriptions/"+subID, fmt.Sprintf(`{"url": %q}`, rcv.URL))
	code, rec := call(t, e, http.MethodPost, "/v1/subscriptions/"+subID+"/recover", `{"since": "`+since+`"}`)
	if code != http.StatusOK || rec["redriven"] != float64(8) {
		t.Fatalf("recover: %d %v", code, rec)
	}
	waitFor(t, "the recovered deliveries", time.Minute, func() bool {
		a, _ := rcv.Delivered("k0")
		b, _ := rcv.Delivered("k1")
		return a == 4 && b == 4
	})
	if v := rcv.Violations(); len(v) > 0 {
		t.Fatalf("order violated:\n%s", strings.Join(v, "\n"))
	}
	var last float64
	if err := st.DB().Get(&last, `SELECT max(seq) FROM deliveries WHERE subscription_id = $1`, subID); err != nil {
		t.Fatal(err)
	}
	_, evs := call(t, e, http.MethodGet, "/v1/events?type=rec.ordered&limit=1", "")
	evID := jpath(evs, "events").([]any)[0].(map[string]any)["id"].(string)
	code, rep := call(t, e, http.MethodPost, "/v1/events/"+evID+"/replay", "")
	ds, _ := rep["deliveries"].([]any)
	if code != http.StatusAccepted || len(ds) != 1 || jpath(ds[0], "seq").(float64) <= last {
		t.Fatalf("replay: %d %v, want a delivery numbered after %v", code, rep, last)
	}
}
