package workflows_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
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

// batchFixture is one output-batching Event Grid on IoT Edge subscription
// (docs/policies.md#eventgrid-edge) of a real store pointing at a scripted
// receiver, and one batch of n published events claimed for it.
type batchFixture struct {
	*fixture
	batch workflows.ClaimResult
}

// newBatchFixture creates the subscription (retryPolicy as in newFixture),
// publishes n events and claims them as one batch with the real activity.
func newBatchFixture(t *testing.T, n int, retryPolicy string, script func(int) int) *batchFixture {
	t.Helper()
	ctx := context.Background()
	st := testenv.Store(t)
	f := &fixture{st: st, recv: newReceiver(t, script), eventType: fmt.Sprintf("batch.created.%d", eventTypes.Add(1))}
	if retryPolicy == "" {
		retryPolicy = "{}"
	}
	f.sub = store.Subscription{
		AccountID: account, URL: f.recv.URL + "/hook", EventTypes: []string{f.eventType},
		Policy: policies.NameEventGridEdge, RetryPolicy: store.RawJSON(retryPolicy), Active: true,
		Options: store.RawJSON(fmt.Sprintf(`{"eventgrid":{"max_events_per_batch":%d}}`, n)),
	}
	if err := st.CreateSubscription(ctx, &f.sub); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if _, err := st.Publish(ctx, store.Event{AccountID: account, Type: f.eventType, Data: store.RawJSON(`{"n":1}`)}); err != nil {
			t.Fatal(err)
		}
	}
	var err error
	if f.policy, err = starter.PolicyOf(f.sub); err != nil {
		t.Fatal(err)
	}
	acts := activities.New(st, testenv.Logger(), testenv.Egress())
	b, err := acts.ClaimBatch(ctx, workflows.ClaimInput{SubscriptionID: f.sub.ID, BatchID: "batch_" + f.sub.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.DeliveryIDs) != n {
		t.Fatalf("claimed %d deliveries, want %d", len(b.DeliveryIDs), n)
	}
	return &batchFixture{fixture: f, batch: b}
}

// run executes the Batch workflow in the time-skipping environment with the
// real activities; setup may register delayed callbacks on env first.
func (f *batchFixture) run(t *testing.T, setup ...func(env *testsuite.TestWorkflowEnvironment)) (workflows.DeliveryResult, []time.Duration) {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	s.SetLogger(sdklog.NewStructuredLogger(testenv.Logger()))
	env := s.NewTestWorkflowEnvironment()
	env.SetTestTimeout(2 * time.Minute)
	env.RegisterWorkflow(workflows.Batch)
	env.RegisterActivity(activities.New(f.st, testenv.Logger(), testenv.Egress()))
	var timers []time.Duration
	env.SetOnTimerScheduledListener(func(_ string, d time.Duration) { timers = append(timers, d) })
	for _, fn := range setup {
		fn(env)
	}
	env.ExecuteWorkflow(workflows.Batch, workflows.BatchInput{BatchID: f.batch.BatchID,
		SubscriptionID: f.sub.ID, DeliveryIDs: f.batch.DeliveryIDs, Policy: f.policy, PublishedAt: f.batch.PublishedAt,
		PublishedAts: f.batch.PublishedAts})
	if !env.IsWorkflowCompleted() {
		t.Fatal("workflow did not complete")
	}
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("workflow failed: %v", err)
	}
	var res workflows.DeliveryResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	return res, timers
}

// checkDeliveries checks every delivery of the batch: its status, reason,
// attempt count and attempt rows.
func (f *batchFixture) checkDeliveries(t *testing.T, status policies.Status, reason string, attempts int) {
	t.Helper()
	for _, id := range f.batch.DeliveryIDs {
		d, err := f.st.GetDelivery(context.Background(), account, id)
		if err != nil {
			t.Fatal(err)
		}
		as, err := f.st.Attempts(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if d.Status != status || d.FinalReason != reason || d.Attempts != attempts || len(as) != attempts {
			t.Errorf("delivery %s: status %q, reason %q, %d attempts, %d attempt rows; want %q, %q, %d",
				id, d.Status, d.FinalReason, d.Attempts, len(as), status, reason, attempts)
		}
	}
}

// endpoint reads the batch's endpoint.
func (f *batchFixture) endpoint(t *testing.T) store.Endpoint {
	t.Helper()
	e, err := f.st.EndpointByID(context.Background(), f.sub.EndpointID)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestBatchWaitsWhileDisabledThenReleased: docs/policies.md#workfront-circuit-breaker,
// applied to docs/policies.md#eventgrid-edge batches (issue 4: policies without
// vendor health rules use the same workflow). A batch to a disabled endpoint
// makes no request and records every delivery waiting, listed for the
// endpoint workflow's release under the batch's own workflow id; the release
// after the endpoint is re-enabled delivers the batch in one request.
func TestBatchWaitsWhileDisabledThenReleased(t *testing.T) {
	t.Parallel()
	f := newBatchFixture(t, 3, "", always(http.StatusOK))
	f.setEndpointState(t, policies.StateDisabled)
	res, timers := f.run(t, func(env *testsuite.TestWorkflowEnvironment) {
		env.RegisterDelayedCallback(func() {
			if n := f.recv.requests(); n != 0 {
				t.Errorf("%d requests while disabled, want 0", n)
			}
			ws, err := f.st.WaitingDeliveries(context.Background(), f.sub.EndpointID, store.Waiting{}, 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(ws) != 3 {
				t.Errorf("%d waiting deliveries, want 3", len(ws))
			}
			for _, w := range ws {
				if w.WorkflowID != "batch/"+f.batch.BatchID {
					t.Errorf("waiting delivery %s listed with workflow %q, want batch/%s", w.ID, w.WorkflowID, f.batch.BatchID)
				}
			}
			f.setEndpointState(t, policies.StateEnabled)
			env.SignalWorkflow(workflows.SignalRelease, nil)
		}, time.Hour)
	})
	if res.Status != "delivered" || res.Attempts != 1 || f.recv.requests() != 1 {
		t.Fatalf("result %+v after %d requests; want delivered in 1", res, f.recv.requests())
	}
	// The wait was bounded by the time-to-live (7,200 s by default), which
	// counts from the events' publication, a moment before the batch began.
	if len(timers) != 1 || timers[0] > 2*time.Hour || timers[0] < 2*time.Hour-10*time.Second {
		t.Errorf("timers = %v, want [2h less the moments since publication]", timers)
	}
	f.checkDeliveries(t, "delivered", "", 1)
	if e := f.endpoint(t); e.Attempts != 1 || e.ConsecutiveFailures != 0 {
		t.Errorf("endpoint counted %d attempts, %d consecutive failures; want 1, 0", e.Attempts, e.ConsecutiveFailures)
	}
}

// TestBatchFrozenNeverTried: docs/policies.md#workfront: "a frozen URL is never
// tried until it is re-enabled by hand", not even by a probe. The batch
// waits out its time-to-live without a request and ends as the policy says.
func TestBatchFrozenNeverTried(t *testing.T) {
	t.Parallel()
	f := newBatchFixture(t, 2, "", always(http.StatusOK))
	f.setEndpointState(t, policies.StateFrozen)
	res, _ := f.run(t, func(env *testsuite.TestWorkflowEnvironment) {
		env.RegisterDelayedCallback(func() { env.SignalWorkflow(workflows.SignalProbe, nil) }, 10*time.Minute)
	})
	want := f.policy.FinalStatus()
	if res.Status != want || res.Reason != string(policies.TTLExceeded) || res.Attempts != 0 {
		t.Errorf("result %+v, want %s, %s, 0 attempts", res, want, policies.TTLExceeded)
	}
	if n := f.recv.requests(); n != 0 {
		t.Errorf("%d requests to a frozen endpoint, want 0", n)
	}
	f.checkDeliveries(t, want, string(policies.TTLExceeded), 0)
}

// TestBatchFailureCountedOncePerRequest: a failing batch of 10 events counts
// one failure against its endpoint per request (one step of its consecutive
// failures, one bucket attempt), while every event gets its own attempt row
// for each request.
func TestBatchFailureCountedOncePerRequest(t *testing.T) {
	t.Parallel()
	f := newBatchFixture(t, 10, `{"max_attempts": 3}`, always(http.StatusInternalServerError))
	res, _ := f.run(t)
	if res.Attempts != 3 || res.Reason != string(policies.MaxAttemptsExceeded) || f.recv.requests() != 3 {
		t.Fatalf("result %+v after %d requests; want 3 attempts, %s", res, f.recv.requests(), policies.MaxAttemptsExceeded)
	}
	f.checkDeliveries(t, f.policy.FinalStatus(), string(policies.MaxAttemptsExceeded), 3)
	e := f.endpoint(t)
	if e.ConsecutiveFailures != 3 || e.Attempts != 3 || e.Failures != 3 {
		t.Errorf("endpoint: %d consecutive failures, %d attempts, %d failures; want 3 each (one per request)",
			e.ConsecutiveFailures, e.Attempts, e.Failures)
	}
	var bucket struct {
		Attempts int64 `db:"attempts"`
		Failures int64 `db:"failures"`
	}
	if err := f.st.DB().Get(&bucket, `SELECT COALESCE(SUM(attempts), 0) AS attempts, COALESCE(SUM(failures), 0) AS failures
		FROM endpoint_buckets WHERE endpoint_id = $1`, f.sub.EndpointID); err != nil {
		t.Fatal(err)
	}
	if bucket.Attempts != 3 || bucket.Failures != 3 {
		t.Errorf("buckets count %d attempts, %d failures; want 3, 3", bucket.Attempts, bucket.Failures)
	}
	var rows int
	if err := f.st.DB().Get(&rows, `SELECT count(*) FROM attempts WHERE delivery_id = ANY(string_to_array($1, ','))`,
		strings.Join(f.batch.DeliveryIDs, ",")); err != nil {
		t.Fatal(err)
	}
	if rows != 30 {
		t.Errorf("%d attempt rows, want 30 (10 events, 3 requests)", rows)
	}
}

// TestBatchTTLFromPublication: docs/policies.md#eventgrid-edge: "the
// time-to-live counts from publication for batched events as for single
// ones" (issue 11, item 8). A batch claimed 7,100 s after its events were
// published (a worker outage) waits for its frozen endpoint only the 100 s
// left of the 7,200 s time-to-live, not a fresh 7,200 s.
func TestBatchTTLFromPublication(t *testing.T) {
	t.Parallel()
	f := newBatchFixture(t, 2, "", always(http.StatusOK))
	if f.batch.PublishedAt.IsZero() {
		t.Fatal("the claim did not say when the batch was published")
	}
	f.batch.PublishedAt = time.Now().Add(-7100 * time.Second)
	f.batch.PublishedAts = []time.Time{f.batch.PublishedAt, f.batch.PublishedAt}
	f.setEndpointState(t, policies.StateFrozen)
	res, timers := f.run(t)
	if res.Reason != string(policies.TTLExceeded) || len(timers) != 1 || timers[0] > 101*time.Second {
		t.Fatalf("result %+v, timers %v: want the TTL reached after at most 100 s", res, timers)
	}
}

// TestBatchEventsKeepTheirOwnTTL: issue 53, item 8
// (docs/policies.md#iot-edge-output-batching). Each event of a batch keeps its
// own time-to-live: an event published 7,100 s before the batch's first
// attempt ends when its 7,200 s are over (after 2 failed attempts: the next
// would come too late), and the batch goes on with the event published just
// now, which gets the whole schedule (13 attempts within its own 7,200 s).
func TestBatchEventsKeepTheirOwnTTL(t *testing.T) {
	t.Parallel()
	f := newBatchFixture(t, 2, "", always(http.StatusInternalServerError))
	if len(f.batch.PublishedAts) != 2 {
		t.Fatalf("the claim did not say when each event was published: %v", f.batch.PublishedAts)
	}
	old := time.Now().Add(-7100 * time.Second)
	f.batch.PublishedAt, f.batch.PublishedAts[0] = old, old
	res, _ := f.run(t)
	if res.Reason != string(policies.TTLExceeded) {
		t.Fatalf("result %+v: want the TTL reached", res)
	}
	for i, want := range []int{2, 13} {
		id := f.batch.DeliveryIDs[i]
		d, err := f.st.GetDelivery(context.Background(), account, id)
		if err != nil {
			t.Fatal(err)
		}
		if d.Attempts != want || d.FinalReason != string(policies.TTLExceeded) || d.Status != f.policy.FinalStatus() {
			t.Errorf("event %d: %d attempts, %q %q; want %d attempts, ended by its own TTL", i, d.Attempts, d.Status, d.FinalReason, want)
		}
	}
}

// TestBatchEventsKeepTheirOwnTTLWhileWaiting: as TestBatchEventsKeepTheirOwnTTL,
// for a batch waiting for its frozen endpoint: the older event ends after the
// 100 s left of its time-to-live, the younger one waits on for its own.
func TestBatchEventsKeepTheirOwnTTLWhileWaiting(t *testing.T) {
	t.Parallel()
	f := newBatchFixture(t, 2, "", always(http.StatusOK))
	old := time.Now().Add(-7100 * time.Second)
	f.batch.PublishedAt, f.batch.PublishedAts[0] = old, old
	f.setEndpointState(t, policies.StateFrozen)
	_, timers := f.run(t)
	if len(timers) != 2 || timers[0] > 101*time.Second || timers[1] < 7000*time.Second {
		t.Fatalf("timers %v: want the older event's 100 s, then the younger one's remaining time-to-live", timers)
	}
	f.checkDeliveries(t, f.policy.FinalStatus(), string(policies.TTLExceeded), 0)
}
