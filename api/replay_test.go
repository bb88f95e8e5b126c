package api

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestReplayEvent: issue 16. POST /v1/events/{id}/replay makes one new
// delivery of a stored event per subscription matching its type now (one
// made after the publish included, a deleted one or another type's not),
// each with a workflow of its own, and they reach their receivers. Real
// Temporal, PostgreSQL and receivers.
func TestReplayEvent(t *testing.T) {
	t.Parallel()
	st := testenvStore(t)
	c := testenvClient(t)
	e := testAPI(t, st, c)
	runWorker(t, st, c)
	first, later, gone, otherType := newReceiver(t), newReceiver(t), newReceiver(t), newReceiver(t)
	subscribe := func(url, typ string) string {
		_, s := call(t, e, http.MethodPost, "/v1/subscriptions", mustJSON(t, map[string]any{"url": url, "event_types": []string{typ}}))
		return s["id"].(string)
	}
	firstSub, goneSub := subscribe(first.URL, "rp.test"), subscribe(gone.URL, "rp.test")
	_, pub := call(t, e, http.MethodPost, "/v1/events", `{"id": "rp-1", "type": "rp.test", "data": {"n": 42}}`)
	for _, d := range pub["deliveries"].([]any) {
		waitDelivered(t, e, d.(map[string]any)["id"].(string))
	}
	laterSub := subscribe(later.URL, "rp.test")
	subscribe(otherType.URL, "rp.other")
	if code, _ := call(t, e, http.MethodDelete, "/v1/subscriptions/"+goneSub, ""); code != http.StatusNoContent {
		t.Fatalf("delete: %d", code)
	}
	code, rep := call(t, e, http.MethodPost, "/v1/events/rp-1/replay", "")
	ds, _ := rep["deliveries"].([]any)
	if code != http.StatusAccepted || rep["id"] != "rp-1" || len(ds) != 2 {
		t.Fatalf("replay: %d %v", code, rep)
	}
	subs := map[any]bool{}
	for _, d := range ds {
		d := d.(map[string]any)
		subs[d["subscription_id"]] = true
		if d["previous_id"] != nil || d["status"] != "pending" {
			t.Errorf("replayed delivery: %v", d)
		}
		waitDelivered(t, e, d["id"].(string))
	}
	if !subs[firstSub] || !subs[laterSub] {
		t.Fatalf("replayed to %v, want %s and %s", subs, firstSub, laterSub)
	}
	waitFor(t, "the receivers' bodies", 30*time.Second, func() bool {
		return len(first.received()) == 2 && len(later.received()) == 1
	})
	if len(gone.received()) != 1 || len(otherType.received()) != 0 || string(later.received()[0]) != string(first.received()[1]) ||
		!strings.Contains(string(later.received()[0]), `"n":42`) {
		t.Fatalf("received: first %q, later %q, deleted %d, other type %d",
			first.received(), later.received(), len(gone.received()), len(otherType.received()))
	}
	if code, got := call(t, e, http.MethodPost, "/v1/events/rp-nope/replay", ""); code != http.StatusNotFound {
		t.Fatalf("replay of an unknown event: %d %v", code, got)
	}
}
