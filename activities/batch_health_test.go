package activities_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/activities"
	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/workflows"
)

// claimedBatch stores a batching Event Grid on IoT Edge subscription to url,
// publishes n events and claims them as one batch.
func claimedBatch(t *testing.T, st *store.Store, url string, n int) (store.Subscription, workflows.ClaimResult) {
	t.Helper()
	ctx := context.Background()
	sub := store.Subscription{AccountID: store.DefaultAccount, URL: url, EventTypes: []string{t.Name()},
		Policy: policies.NameEventGridEdge, Active: true,
		Options: store.RawJSON(`{"eventgrid":{"max_events_per_batch":10}}`)}
	if err := st.CreateSubscription(ctx, &sub); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if _, err := st.Publish(ctx, store.Event{AccountID: store.DefaultAccount, Type: t.Name(), Data: store.RawJSON(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	b, err := activities.New(st, testenv.Logger(), testenv.Egress()).ClaimBatch(ctx, workflows.ClaimInput{SubscriptionID: sub.ID, BatchID: "batch_" + sub.ID})
	if err != nil || len(b.DeliveryIDs) != n {
		t.Fatalf("claim: %+v %v", b, err)
	}
	return sub, b
}

// countingServer answers code to every request and counts them.
func countingServer(t *testing.T, code int) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n.Add(1)
		w.WriteHeader(code)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func setState(t *testing.T, st *store.Store, endpointID, state string) {
	t.Helper()
	if _, err := st.DB().Exec(`UPDATE endpoints SET state = $2 WHERE id = $1`, endpointID, state); err != nil {
		t.Fatal(err)
	}
}

// TestDeliverBatchHealthGate: docs/policies.md#workfront, for batches as for
// single deliveries: no request while the endpoint is disabled, except a
// probe; none at all while it is frozen, probe or not.
func TestDeliverBatchHealthGate(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	srv, requests := countingServer(t, http.StatusOK)
	sub, b := claimedBatch(t, st, srv.URL, 3)
	acts := activities.New(st, testenv.Logger(), testenv.Egress())
	deliver := func(attempt int, probe bool) workflows.DeliverResult {
		t.Helper()
		res, err := acts.DeliverBatch(context.Background(), workflows.DeliverBatchInput{BatchID: b.BatchID,
			DeliveryIDs: b.DeliveryIDs, Attempt: attempt, ScheduledAt: time.Now(), Timeout: 5 * time.Second,
			Probe: probe, Health: policies.WorkfrontHealth})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for _, c := range []struct {
		state string
		probe bool
	}{{policies.StateDisabled, false}, {policies.StateFrozen, false}, {policies.StateFrozen, true}} {
		setState(t, st, sub.EndpointID, c.state)
		if res := deliver(0, c.probe); !res.Skipped || res.EndpointState != c.state || requests.Load() != 0 {
			t.Fatalf("%s, probe %v: %+v after %d requests; want skipped, no request", c.state, c.probe, res, requests.Load())
		}
	}
	setState(t, st, sub.EndpointID, policies.StateDisabled)
	if res := deliver(0, true); res.Skipped || !res.Success || requests.Load() != 1 {
		t.Fatalf("probe to a disabled endpoint: %+v after %d requests; want one successful request", res, requests.Load())
	}
	for _, id := range b.DeliveryIDs {
		if as, err := st.Attempts(context.Background(), id); err != nil || len(as) != 1 {
			t.Errorf("delivery %s: %d attempt rows (%v), want 1", id, len(as), err)
		}
	}
}

// TestDeliverBatchSignalsEndpointOncePerRequest: a 410 Gone to a batch's
// request tells the endpoint workflow once per request (not once per event),
// as Deliver does for one event.
func TestDeliverBatchSignalsEndpointOncePerRequest(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	srv, _ := countingServer(t, http.StatusGone)
	sub, b := claimedBatch(t, st, srv.URL, 4)
	setGoneRule(t, st, sub.EndpointID, true)
	acts := activities.New(st, testenv.Logger(), testenv.Egress())
	acts.Temporal = testenv.Client(t)
	for attempt := 0; attempt < 2; attempt++ {
		res, err := acts.DeliverBatch(context.Background(), workflows.DeliverBatchInput{BatchID: b.BatchID,
			DeliveryIDs: b.DeliveryIDs, Attempt: attempt, ScheduledAt: time.Now(), Timeout: 5 * time.Second,
			Health: workfrontGone})
		if err != nil || res.StatusCode != http.StatusGone {
			t.Fatalf("attempt %d: %+v %v", attempt, res, err)
		}
		if res.Counters.ConsecutiveFailures != int64(attempt+1) {
			t.Errorf("attempt %d: %d consecutive failures, want %d", attempt, res.Counters.ConsecutiveFailures, attempt+1)
		}
	}
	if n := signalsTo(t, acts.Temporal, sub.EndpointID, workflows.SignalGone); n != 2 {
		t.Fatalf("%d gone signals for 2 requests of 4 events, want 2", n)
	}
}
