package activities_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/hookrelay/hookrelay/activities"
	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/workflows"
)

// brokenClient is a client of the real dev server whose namespace does not
// exist, so every signal it sends fails.
func brokenClient(t *testing.T) client.Client {
	t.Helper()
	srv := testenv.TemporalServer(t)
	c, err := client.Dial(client.Options{HostPort: srv.Address, Namespace: "no-such-namespace",
		Logger: sdklog.NewStructuredLogger(testenv.Logger())})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// signalsTo counts the signals named name in the endpoint workflow's history.
func signalsTo(t *testing.T, c client.Client, endpointID, name string) int {
	t.Helper()
	it := c.GetWorkflowHistory(context.Background(), workflows.EndpointWorkflowID(endpointID), "", false,
		enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	n := 0
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if a := ev.GetWorkflowExecutionSignaledEventAttributes(); a != nil && a.GetSignalName() == name {
			n++
		}
	}
	return n
}

// attempt makes attempt n of d with the workfront circuit breaker.
func attempt(t *testing.T, acts *activities.Activities, d store.Delivery, n int) {
	t.Helper()
	_, err := acts.Deliver(context.Background(), workflows.DeliverInput{DeliveryID: d.ID, Attempt: n,
		ScheduledAt: time.Now(), Timeout: 5 * time.Second, Health: workfrontGone})
	if err != nil {
		t.Fatal(err)
	}
}

// workfrontGone is Workfront's breaker with 410 Gone disabling, as custom
// policies have it (docs/policies.md#common-rules), for the tests of the 410 signal.
var workfrontGone = func() policies.Health {
	h := policies.WorkfrontHealth
	h.DisableOnGone = true
	return h
}()

// TestHealthSignalSlotTakenOnlyWhenSent: a threshold crossing whose signal
// failed does not keep the next attempt (within the 5 s rate limit) from
// signalling it.
func TestHealthSignalSlotTakenOnlyWhenSent(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer srv.Close()
	d := deliveryTo(t, st, srv.URL)
	if _, err := st.DB().Exec(`UPDATE endpoints SET consecutive_failures = 2000 WHERE id = $1`, d.EndpointID); err != nil {
		t.Fatal(err)
	}
	acts := activities.New(st, testenv.Logger(), testenv.Egress())
	acts.Temporal = brokenClient(t)
	attempt(t, acts, d, 0) // crosses the threshold; the signal fails
	good := testenv.Client(t)
	acts.Temporal = good
	attempt(t, acts, d, 1)
	if n := signalsTo(t, good, d.EndpointID, workflows.SignalEvaluate); n != 1 {
		t.Fatalf("%d evaluate signals, want 1", n)
	}
}

// TestHealthSignalGoneNotRateLimited: every 410 is signalled, however soon
// after the last signal.
func TestHealthSignalGoneNotRateLimited(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusGone)
	}))
	defer srv.Close()
	d := deliveryTo(t, st, srv.URL)
	setGoneRule(t, st, d.EndpointID, true)
	acts := activities.New(st, testenv.Logger(), testenv.Egress())
	acts.Temporal = testenv.Client(t)
	attempt(t, acts, d, 0)
	attempt(t, acts, d, 1)
	if n := signalsTo(t, acts.Temporal, d.EndpointID, workflows.SignalGone); n != 2 {
		t.Fatalf("%d gone signals, want 2", n)
	}
}
