package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lib/pq"
	"go.temporal.io/sdk/client"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/where"
	"github.com/hookrelay/hookrelay/worker"
)

// sapWorker runs real workers on the three task queues, stopped when the
// test ends.
func sapWorker(t *testing.T, st *store.Store, c client.Client) {
	t.Helper()
	testenv.Worker(t, c, st, worker.Options{})
}

// switchReceiver answers 503 until up is set, then 200, recording the ids of
// the events it accepted.
type switchReceiver struct {
	*httptest.Server
	up       atomic.Bool
	mu       sync.Mutex
	accepted []string
}

func newSwitchReceiver(t *testing.T) *switchReceiver {
	r := &switchReceiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if !r.up.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		var ev struct{ ID string }
		_ = json.NewDecoder(req.Body).Decode(&ev)
		r.mu.Lock()
		r.accepted = append(r.accepted, ev.ID)
		r.mu.Unlock()
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *switchReceiver) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := slices.Clone(r.accepted)
	slices.Sort(out)
	return out
}

// sapWait polls cond until it holds, failing the test after a minute.
func sapWait(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func (h *sapHarness) status(account, deliveryID string) policies.Status {
	d, err := h.st.GetDelivery(h.t.Context(), account, deliveryID)
	if err != nil {
		h.t.Fatal(err)
	}
	return d.Status
}

// TestRedeliverReactivatesAndDelivers is the whole SAP flow on real servers:
// a failing receiver exhausts the retries (max_attempts 1 keeps it short),
// the subscription is deactivated and a later event queued; after the
// receiver is back, PUT reactivates the subscription and both queued events
// reach it; later events are pushed again. Another account's PUT touches none
// of it.
func TestRedeliverReactivatesAndDelivers(t *testing.T) {
	t.Parallel()
	st, c := testenv.Store(t), testenv.Client(t)
	sapWorker(t, st, c)
	h := newSAPHarness(t, st, c)
	recv := newSwitchReceiver(t)
	u := recv.URL + "/hook"
	a, b := h.newAccount("a"), h.newAccount("b")
	subID := h.subscribe(a, u, "order.created", "sap", `{"max_attempts":1}`)
	first := h.publish(a, "evt-1", "order.created", `{"n":1}`)[0]
	sapWait(t, "evt-1 queued", func() bool { return h.status(a.ID, first.ID) == policies.StatusQueued })
	if sub, _ := st.GetSubscription(t.Context(), a.ID, subID); sub.Active {
		t.Fatal("subscription still active after its retries ran out")
	}
	second := h.publish(a, "evt-2", "order.created", `{"n":2}`)[0]
	if second.Status != policies.StatusQueued {
		t.Fatalf("later event: %+v, want queued at once", second)
	}
	queued := "channel='webhook' and status='queued' and config.url='" + u + "'"
	recv.up.Store(true)
	// B's PUT, with the same where clause, finds nothing of A's.
	subB := h.subscribe(b, u, "order.created", "sap", "")
	h.pause(b, subB)
	h.publish(b, "evt-b", "order.created", `{}`)
	var res RedeliverResponse
	h.do(http.MethodPut, queuePath(queued, ""), b.Auth, "").json(t, &res)
	if res.Redelivered != 1 || !slices.Equal(res.ReactivatedSubscriptions, []string{subB}) {
		t.Fatalf("B's PUT: %+v, want its one event and its own subscription", res)
	}
	if h.status(a.ID, first.ID) != policies.StatusQueued {
		t.Fatal("B's PUT touched A's queue")
	}
	r := h.do(http.MethodPut, queuePath(queued, ""), a.Auth, "")
	res = RedeliverResponse{}
	r.json(t, &res)
	if r.code != http.StatusOK || res.Redelivered != 2 || !slices.Equal(res.ReactivatedSubscriptions, []string{subID}) {
		t.Fatalf("A's PUT: %d %s", r.code, r.body)
	}
	sapWait(t, "both queued events received", func() bool {
		return slices.Equal(recv.got(), []string{"evt-1", "evt-2", "evt-b"})
	})
	checkRedelivered(t, h, a, subID, []string{first.ID, second.ID}, res.Deliveries)
	if got := h.pull(a.Auth, queued); len(got) != 0 {
		t.Fatalf("still queued after redelivery: %+v", got)
	}
	// Pushed again under the subscription's policy.
	third := h.publish(a, "evt-3", "order.created", `{"n":3}`)[0]
	if third.Status != "pending" {
		t.Fatalf("event after reactivation: %+v, want pending", third)
	}
	sapWait(t, "evt-3 delivered", func() bool { return h.status(a.ID, third.ID) == policies.StatusDelivered })
	res = RedeliverResponse{}
	h.do(http.MethodPut, queuePath(queued, ""), a.Auth, "").json(t, &res)
	if res.Redelivered != 0 {
		t.Fatalf("second PUT redelivered %d", res.Redelivered)
	}
}

// checkRedelivered checks the subscription is active, each old delivery is
// redelivered and linked to a fresh one, and each fresh one was delivered.
func checkRedelivered(t *testing.T, h *sapHarness, a sapAccount, subID string, old, fresh []string) {
	t.Helper()
	if sub, _ := h.st.GetSubscription(t.Context(), a.ID, subID); !sub.Active {
		t.Fatal("subscription not reactivated")
	}
	for _, id := range fresh {
		sapWait(t, "fresh delivery delivered", func() bool { return h.status(a.ID, id) == policies.StatusDelivered })
	}
	var links []string
	if err := h.st.DB().Select(&links, `SELECT o.status || '>' || n.id FROM deliveries o
		JOIN deliveries n ON n.id = o.redelivery_id AND n.previous_id = o.id
		WHERE o.id = ANY($1) ORDER BY o.created_at, o.id`, pq.StringArray(old)); err != nil {
		t.Fatal(err)
	}
	want := []string{}
	for _, id := range fresh {
		want = append(want, string(policies.StatusRedelivered)+">"+id)
	}
	slices.Sort(links)
	slices.Sort(want)
	if !slices.Equal(links, want) {
		t.Fatalf("links %v, want %v", links, want)
	}
}

// TestRedeliverCrashBeforeStartIsSwept stops after the database part of a
// redelivery, as a crash before the workflows were started would: the fresh
// deliveries are stored unstarted, and the worker's sweeper delivers them.
func TestRedeliverCrashBeforeStartIsSwept(t *testing.T) {
	t.Parallel()
	st, c := testenv.Store(t), testenv.Client(t)
	sapWorker(t, st, c)
	h := newSAPHarness(t, st, c)
	recv := newSwitchReceiver(t)
	recv.up.Store(true)
	a := h.newAccount("crashy")
	h.pause(a, h.subscribe(a, recv.URL+"/hook", "order.created", "sap", ""))
	h.publish(a, "evt-1", "order.created", `{}`)
	w, err := where.Parse("status='queued'")
	if err != nil {
		t.Fatal(err)
	}
	res, err := st.Redeliver(t.Context(), a.ID, w)
	if err != nil || len(res.Deliveries) != 1 || res.Deliveries[0].Started {
		t.Fatalf("redeliver: %+v %v", res, err)
	}
	if got := h.pull(a.Auth, "status='queued'"); len(got) != 0 {
		t.Fatalf("still queued: %+v", got)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	sweeper := testenv.Starter(t, c, st)
	go sweeper.Sweep(ctx, 50*time.Millisecond, 0)
	sapWait(t, "the swept delivery received", func() bool { return slices.Equal(recv.got(), []string{"evt-1"}) })
	sapWait(t, "the swept delivery delivered", func() bool {
		return h.status(a.ID, res.Deliveries[0].ID) == policies.StatusDelivered
	})
}
