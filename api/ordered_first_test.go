package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/hookrelay/hookrelay/testenv"
)

// TestOrderedFirstAttemptBySequencer: issue 56. A Sequencer makes each
// delivery's first attempt itself: a delivery it delivers has no workflow
// of its own; one whose first attempt fails is handed to a Delivery child
// that goes on from that attempt (its next one is attempt 1, after the
// policy's interval, not a second first attempt), and the next event waits
// for it.
func TestOrderedFirstAttemptBySequencer(t *testing.T) {
	t.Parallel()
	st, c := testenvStore(t), testenvClient(t)
	e := testAPI(t, st, c)
	runWorker(t, st, c)
	rcv := testenv.NewOrderedReceiver(t, 0)
	var failed atomic.Bool
	rcv.Fail = func(ev testenv.OrderedEvent) bool { return ev.N == 1 && !failed.Swap(true) }
	subID := subscribeOrdered(t, e, rcv.URL, "first.ordered", fastRetries)
	ids := []string{publishKeyed(t, e, "first.ordered", "k", "0"), publishKeyed(t, e, "first.ordered", "k", "1"),
		publishKeyed(t, e, "first.ordered", "k", "2")}
	waitSettled(t, st, subID, 3, time.Minute)
	if v := rcv.Violations(); len(v) > 0 {
		t.Fatalf("order violated:\n%s", strings.Join(v, "\n"))
	}
	checkRecordedOrder(t, st, subID)
	for n, id := range ids {
		d := deliveryOf(t, e, id)
		if exists := workflowExists(t, c, d["workflow_id"].(string)); exists != (n == 1) {
			t.Errorf("event %d (%v after %v attempts): workflow exists %v, want %v", n, d["status"], d["attempts"], exists, n == 1)
		}
	}
	as, err := st.Attempts(context.Background(), ids[1])
	if err != nil {
		t.Fatal(err)
	}
	if len(as) != 2 || as[0].Attempt != 0 || as[0].Success || as[1].Attempt != 1 || !as[1].Success {
		t.Errorf("attempts of event 1: %+v, want attempt 0 failed then attempt 1 delivered", as)
	}
}

// TestOrderedSkipDuringFirstAttempt: issue 56. A delivery skipped while
// its Sequencer's first attempt is in flight, which then fails, is not
// handed to a Delivery child to be retried: it stays dead-lettered after
// that one request, and the sequence goes on with the next event.
func TestOrderedSkipDuringFirstAttempt(t *testing.T) {
	t.Parallel()
	st, c := testenvStore(t), testenvClient(t)
	e := testAPI(t, st, c)
	runWorker(t, st, c)
	rcv := newHoldingReceiver(t)
	subID := subscribeOrdered(t, e, rcv.URL, "held.first", fastRetries)
	first, second := publishKeyed(t, e, "held.first", "k", "0"), publishKeyed(t, e, "held.first", "k", "1")
	select {
	case <-rcv.arrived:
	case <-time.After(time.Minute):
		t.Fatal("event 0 never arrived")
	}
	code, skipped := call(t, e, http.MethodPost, "/v1/deliveries/"+first+"/skip", "")
	if code != http.StatusOK || skipped["status"] != "dead_lettered" {
		t.Fatalf("skip: %d %v", code, skipped)
	}
	rcv.open()
	waitSettled(t, st, subID, 2, time.Minute)
	if d := deliveryOf(t, e, second); d["status"] != "delivered" {
		t.Fatalf("event 1: %v", d)
	}
	d := deliveryOf(t, e, first)
	if d["status"] != "dead_lettered" || d["final_reason"] != SkipReason || rcv.requests(0) != 1 {
		t.Errorf("skipped event: %v after %d requests, want dead-lettered after 1", d, rcv.requests(0))
	}
	if workflowExists(t, c, d["workflow_id"].(string)) {
		t.Errorf("skipped event has a Delivery workflow")
	}
}

// holdingReceiver answers the requests for event 0 (data.n) 500, each once
// it is opened (open), after saying it arrived; the others 200 at once.
type holdingReceiver struct {
	*httptest.Server
	arrived, release chan struct{}
	once             sync.Once
	mu               sync.Mutex
	byN              map[int]int
}

func newHoldingReceiver(t *testing.T) *holdingReceiver {
	r := &holdingReceiver{arrived: make(chan struct{}, 100), release: make(chan struct{}), byN: map[int]int{}}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var body struct{ Data testenv.OrderedEvent }
		if err := json.NewDecoder(req.Body).Decode(&body); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		r.byN[body.Data.N]++
		r.mu.Unlock()
		if body.Data.N == 0 {
			r.arrived <- struct{}{}
			<-r.release
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	t.Cleanup(r.Close)
	t.Cleanup(r.open) // before Close: no request left held
	return r
}

// open lets the held requests, and those after them, be answered.
func (r *holdingReceiver) open() { r.once.Do(func() { close(r.release) }) }

// requests is how many requests came for event n.
func (r *holdingReceiver) requests(n int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byN[n]
}

// workflowExists tells whether the workflow id was ever started.
func workflowExists(t *testing.T, c client.Client, id string) bool {
	t.Helper()
	_, err := c.DescribeWorkflowExecution(context.Background(), id, "")
	var missing *serviceerror.NotFound
	if errors.As(err, &missing) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}
