package workflows_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/worker"
	"github.com/hookrelay/hookrelay/workflows"
)

// gate is a receiver that holds every request until it has held want at
// once (or the test's limit passed), then answers them all 200.
type gate struct {
	*httptest.Server
	mu       sync.Mutex
	held     int
	max      int
	requests int
	open     chan struct{}
	once     sync.Once
}

func newGate(t *testing.T, want int) *gate {
	g := &gate{open: make(chan struct{})}
	g.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		g.mu.Lock()
		g.held++
		g.requests++
		g.max = max(g.max, g.held)
		if g.held >= want {
			g.once.Do(func() { close(g.open) })
		}
		g.mu.Unlock()
		select {
		case <-g.open:
		case <-time.After(time.Minute):
		}
		g.mu.Lock()
		g.held--
		g.mu.Unlock()
	}))
	t.Cleanup(g.Close)
	return g
}

// publishTo creates one subscription to url under policy and publishes n
// events to it, returning their deliveries.
func publishTo(t *testing.T, st *store.Store, url, policy, retryPolicy string, n int) (store.Subscription, []store.Delivery) {
	t.Helper()
	ctx := context.Background()
	typ := fmt.Sprintf("isolation.%d", eventTypes.Add(1))
	sub := store.Subscription{AccountID: account, URL: url, EventTypes: []string{typ}, Policy: policy,
		RetryPolicy: store.RawJSON(retryPolicy), Active: true}
	if err := st.CreateSubscription(ctx, &sub); err != nil {
		t.Fatal(err)
	}
	var ds []store.Delivery
	for range n {
		pub, err := st.Publish(ctx, store.Event{AccountID: account, Type: typ, Data: store.RawJSON(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		ds = append(ds, pub.Deliveries...)
	}
	return sub, ds
}

// TestFirstAttemptsPastTheShareAreHandedOver: with two local-activity slots
// and an endpoint share of one, three first attempts to a receiver that
// holds its requests are all open at once (one local, two handed over to the
// deliveries queue), where holding them all in local activities could never
// reach three; each is one request, delivered, numbered attempt 1.
func TestFirstAttemptsPastTheShareAreHandedOver(t *testing.T) {
	t.Parallel()
	c, st := testenv.Client(t), testenv.Store(t)
	g := newGate(t, 3)
	s := testenv.Worker(t, c, st, worker.Options{HTTPConcurrency: 2, FirstAttemptsPerEndpoint: 1})
	_, ds := publishTo(t, st, g.URL+"/hook", "eventgrid", "{}", 3)
	if err := s.Start(context.Background(), ds); err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		res := awaitWorkflow(t, d.WorkflowID)
		if res.Status != "delivered" || res.Attempts != 1 {
			t.Errorf("%s: %+v, want delivered after 1 attempt", d.ID, res)
		}
		as, err := settledAttempts(t, st, d.ID)
		if err != nil || len(as) != 1 || as[0].Attempt != 0 || !as[0].Success {
			t.Errorf("%s: attempts %+v (%v), want one successful attempt 0", d.ID, as, err)
		}
	}
	recordHandedOver(t, ds)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.max != 3 || g.requests != 3 {
		t.Errorf("receiver held %d at once of %d requests, want 3 of 3", g.max, g.requests)
	}
}

// settledAttempts returns a delivery's attempts once none is in flight: a
// first attempt's success is written just after its workflow is told
// (activities.Later).
func settledAttempts(t *testing.T, st *store.Store, id string) ([]store.Attempt, error) {
	t.Helper()
	for i := 0; ; i++ {
		as, err := st.Attempts(context.Background(), id)
		if err != nil || i == 300 || !slices.ContainsFunc(as, func(a store.Attempt) bool { return a.ErrorKind == store.KindInFlight }) {
			return as, err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// recordHandedOver records, with HOOKRELAY_RECORD_HISTORIES=1, the history
// of a delivery among ds whose first attempt was handed over (made as an
// activity), for TestReplayRecordedHistories; it fails when none was.
func recordHandedOver(t *testing.T, ds []store.Delivery) {
	t.Helper()
	for _, d := range ds {
		for _, e := range testenv.History(t, testenv.Client(t), d.WorkflowID).Events {
			if e.GetEventType() == enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED {
				recordIfAsked(t, d.WorkflowID, "eventgrid-handed-over-delivered")
				return
			}
		}
	}
	t.Error("no first attempt was made as an activity")
}

// recordIfAsked writes a closed Delivery's history to testdata/histories as
// name, with HOOKRELAY_RECORD_HISTORIES=1 (TestRecordHistories).
func recordIfAsked(t *testing.T, workflowID, name string) {
	t.Helper()
	if os.Getenv("HOOKRELAY_RECORD_HISTORIES") == "1" {
		writeHistory(t, testenv.Client(t), workflowID, filepath.Join(historiesDir, name+".json"))
	}
}

// awaitWorkflow waits for a Delivery workflow's result.
func awaitWorkflow(t *testing.T, workflowID string) workflows.DeliveryResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var res workflows.DeliveryResult
	if err := testenv.Client(t).GetWorkflow(ctx, workflowID, "").Get(ctx, &res); err != nil {
		t.Fatalf("workflow %s: %v", workflowID, err)
	}
	return res
}

// TestLateAnswerDelivers: an Event Grid delivery whose receiver answers 200
// after the attempt's timeout (1 s here), but within the 3 minutes Azure
// waits, is delivered by that answer: its attempt is recorded as the
// success it was, with its real duration, and no retry is sent
// (docs/policies.md#eventgrid).
func TestLateAnswerDelivers(t *testing.T) {
	t.Parallel()
	c, st := testenv.Client(t), testenv.Store(t)
	var mu sync.Mutex
	requests := 0
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		requests++
		mu.Unlock()
		time.Sleep(2500 * time.Millisecond)
	}))
	t.Cleanup(recv.Close)
	s := testenv.Worker(t, c, st, worker.Options{})
	_, ds := publishTo(t, st, recv.URL+"/hook", "eventgrid", `{"timeout_seconds": 1}`, 1)
	if err := s.Start(context.Background(), ds); err != nil {
		t.Fatal(err)
	}
	res := awaitWorkflow(t, ds[0].WorkflowID)
	if res.Status != "delivered" || res.Attempts != 1 {
		t.Errorf("result %+v, want delivered after 1 attempt", res)
	}
	as, err := settledAttempts(t, st, ds[0].ID)
	if err != nil || len(as) != 1 || !as[0].Success || as[0].StatusCode != 200 || as[0].DurationMs < 2400 {
		t.Errorf("attempts %+v (%v), want one success of about 2.5 s", as, err)
	}
	d, err := st.GetDelivery(context.Background(), account, ds[0].ID)
	if err != nil || d.Status != "delivered" {
		t.Errorf("delivery %+v (%v), want delivered", d, err)
	}
	recordIfAsked(t, ds[0].WorkflowID, "eventgrid-late-answer-delivered")
	mu.Lock()
	defer mu.Unlock()
	if requests != 1 {
		t.Errorf("receiver got %d requests, want 1", requests)
	}
}

// TestSlotWaitLeavesWholeTimeout: a first attempt that waits for its
// worker's only local-activity slot (held 19 s by another) still gets its
// policy's whole 20 s, counted from its send: it is delivered by an answer
// that takes 19 s, not cut at the 35 s its attempt may take counted from
// when it was scheduled.
func TestSlotWaitLeavesWholeTimeout(t *testing.T) {
	t.Parallel()
	c, st := testenv.Client(t), testenv.Store(t)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(19 * time.Second)
	}))
	t.Cleanup(recv.Close)
	s := testenv.Worker(t, c, st, worker.Options{HTTPConcurrency: 1})
	_, ds := publishTo(t, st, recv.URL+"/hook", "custom",
		`{"custom": {"kind": "fixed", "interval_seconds": 1}, "timeout_seconds": 20}`, 2)
	if err := s.Start(context.Background(), ds); err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		res := awaitWorkflow(t, d.WorkflowID)
		as, err := settledAttempts(t, st, d.ID)
		if res.Status != "delivered" || err != nil || len(as) != 1 || !as[0].Success {
			t.Errorf("%s: %+v, attempts %+v (%v), want delivered by one attempt", d.ID, res, as, err)
		}
	}
}
