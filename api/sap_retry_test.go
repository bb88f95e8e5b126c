package api

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"

	"github.com/hookrelay/hookrelay/activities"
	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/starter"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/workflows"
)

// TestRetryModeExhaustsThenQueues runs the real Delivery workflow with the
// real activities and store in the time-skipping environment: under the sap
// policy, a failing receiver gets the first attempt and 5 retries at 8 s,
// 64 s, 512 s, 4,096 s and 32,768 s after the first failure; then the delivery
// is queued, the subscription deactivated, a later event queued at once, and
// both can be pulled. The account stays in retry mode.
func TestRetryModeExhaustsThenQueues(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	h := newSAPHarness(t, st, nil)
	var requests atomic.Int64
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		requests.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(recv.Close)
	a := h.newAccount("retrier")
	subID := h.subscribe(a, recv.URL+"/hook", "order.created", "sap", "")
	ctx := t.Context()
	first, err := st.Publish(ctx, store.Event{AccountID: a.ID, ExternalID: "evt-1", Type: "order.created"})
	if err != nil || len(first.Deliveries) != 1 || first.Deliveries[0].Status != "pending" {
		t.Fatalf("publish: %+v %v", first.Deliveries, err)
	}
	d := first.Deliveries[0]
	sub, err := st.GetSubscription(ctx, a.ID, subID)
	if err != nil {
		t.Fatal(err)
	}
	p, err := starter.PolicyOf(sub)
	if err != nil {
		t.Fatal(err)
	}
	var s testsuite.WorkflowTestSuite
	s.SetLogger(sdklog.NewStructuredLogger(testenv.Logger()))
	env := s.NewTestWorkflowEnvironment()
	env.SetTestTimeout(2 * time.Minute)
	env.RegisterWorkflow(workflows.Delivery)
	env.RegisterActivity(activities.New(st, testenv.Logger(), testenv.Egress()))
	env.ExecuteWorkflow(workflows.Delivery, workflows.DeliveryInput{
		DeliveryID: d.ID, SubscriptionID: subID, EndpointID: d.EndpointID,
		EventType: d.EventType, URL: sub.URL, Policy: p,
	})
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		t.Fatalf("workflow: completed %v, error %v", env.IsWorkflowCompleted(), env.GetWorkflowError())
	}
	var res workflows.DeliveryResult
	if err := env.GetWorkflowResult(&res); err != nil || res.Status != policies.StatusQueued || res.Attempts != 6 {
		t.Fatalf("result %+v (%v), want queued after 6 attempts", res, err)
	}
	if n := requests.Load(); n != 6 {
		t.Fatalf("receiver got %d requests, want 6", n)
	}
	checkSAPOffsets(t, st, d.ID)
	checkDeactivatedAndQueued(t, h, a, subID, d.ID)
}

// checkSAPOffsets checks when each attempt was scheduled, relative to the
// first (the first failure): 2^(3x) seconds for retry x.
func checkSAPOffsets(t *testing.T, st *store.Store, deliveryID string) {
	t.Helper()
	as, err := st.Attempts(t.Context(), deliveryID)
	if err != nil || len(as) != 6 {
		t.Fatalf("%d attempts (%v)", len(as), err)
	}
	want := []time.Duration{0, 8 * time.Second, 64 * time.Second, 512 * time.Second, 4096 * time.Second, 32768 * time.Second}
	for i, at := range as {
		got := at.ScheduledAt.Sub(as[0].ScheduledAt)
		if d := got - want[i]; d < -time.Second || d > time.Second || at.Success {
			t.Errorf("attempt %d scheduled %v after the first (success %v), want %v", i, got, at.Success, want[i])
		}
	}
}

// checkDeactivatedAndQueued checks the state after the retries ran out, then
// publishes a later event and pulls both.
func checkDeactivatedAndQueued(t *testing.T, h *sapHarness, a sapAccount, subID, deliveryID string) {
	t.Helper()
	ctx := t.Context()
	d, err := h.st.GetDelivery(ctx, a.ID, deliveryID)
	if err != nil || d.Status != policies.StatusQueued || d.FinishedAt == nil {
		t.Fatalf("delivery %+v (%v), want queued", d, err)
	}
	if sub, _ := h.st.GetSubscription(ctx, a.ID, subID); sub.Active {
		t.Fatal("subscription still active after the retries ran out")
	}
	if ac, _ := h.st.GetAccount(ctx, a.ID); ac.Mode != store.ModeRetry {
		t.Fatalf("account mode %q, want retry (the document: not changed to queue)", ac.Mode)
	}
	later, err := h.st.Publish(ctx, store.Event{AccountID: a.ID, ExternalID: "evt-2", Type: "order.created"})
	if err != nil || len(later.Deliveries) != 1 {
		t.Fatalf("publish later: %+v %v", later.Deliveries, err)
	}
	if l := later.Deliveries[0]; l.Status != policies.StatusQueued || !l.Started {
		t.Fatalf("later delivery %+v, want queued at once, no workflow", l)
	}
	got := h.pull(a.Auth, "channel='webhook' and status='queued' and subscription.id='"+subID+"'")
	if len(got) != 2 || !slices.Equal([]string{got[0].Event.ID, got[1].Event.ID}, []string{"evt-1", "evt-2"}) {
		t.Fatalf("pulled %+v, want evt-1 then evt-2", got)
	}
}
