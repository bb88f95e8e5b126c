package eventgrid_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/worker"
)

// runWorker runs the real worker until the test ends.
func runWorker(t *testing.T, c client.Client, st *store.Store) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- worker.Run(ctx, c, st, testenv.Logger(),
			worker.Options{HTTPConcurrency: 50, QueuePrefix: testenv.QueuePrefix(t), Egress: testenv.Egress()})
	}()
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			cancel()
			if err := <-done; err != nil {
				t.Errorf("worker: %v", err)
			}
		}
	}
	t.Cleanup(stop)
	return stop
}

// waitFinal waits until every delivery of sub is delivered.
func waitDelivered(t *testing.T, st *store.Store, subID string, n int, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		var got int
		err := st.DB().Get(&got, `SELECT count(*) FROM deliveries WHERE subscription_id = $1 AND status = 'delivered'`, subID)
		if err != nil {
			t.Fatal(err)
		}
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d deliveries delivered after %v", got, n, limit)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// eachOnce checks that the receiver got every id prefix-0..n-1 exactly once.
func eachOnce(t *testing.T, reqs []request, prefix string, n int) {
	t.Helper()
	seen := map[string]int{}
	for _, q := range reqs {
		for _, e := range q.Events {
			id, _ := e["id"].(string)
			seen[id]++
		}
	}
	for i := 0; i < n; i++ {
		if id := prefix + "-" + itoa(i); seen[id] != 1 {
			t.Errorf("event %s received %d times", id, seen[id])
		}
	}
	if len(seen) != n {
		t.Errorf("%d distinct events received; want %d", len(seen), n)
	}
}

func TestEdgeOutputBatching(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	c := testenv.Client(t)
	runWorker(t, c, st)
	h := apiServer(t, st, c, policies.EdgeDefaults{})
	batched := newReceiver(t, always(http.StatusOK))
	single := newReceiver(t, always(http.StatusOK))
	bsub := putSub(t, st, h, "batched", "?mode=edge", `{`+webhook(batched.URL, "")+`,
		"filter":{"includedEventTypes":["b.evt"]},"outputBatching":{"maxEventsPerBatch":10}}`)
	ssub := putSub(t, st, h, "single", "?mode=edge", `{`+webhook(single.URL, "")+`,"filter":{"includedEventTypes":["s.evt"]}}`)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	for _, body := range []string{egEvents("b", "b.evt", 100), egEvents("s", "s.evt", 100)} {
		resp, err := http.Post(srv.URL+"/eventgrid/events", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("publish: %d", resp.StatusCode)
		}
	}
	waitDelivered(t, st, bsub.ID, 100, 2*time.Minute)
	waitDelivered(t, st, ssub.ID, 100, 2*time.Minute)
	breqs := batched.requests()
	t.Logf("100 events to the batching subscription took %d requests", len(breqs))
	if len(breqs) > 12 {
		t.Errorf("batched subscription got %d requests; want at most 12", len(breqs))
	}
	for _, q := range breqs {
		if len(q.Events) > 10 {
			t.Errorf("a batch of %d events; maxEventsPerBatch is 10", len(q.Events))
		}
	}
	eachOnce(t, breqs, "b", 100)
	sreqs := single.requests()
	if len(sreqs) != 100 {
		t.Errorf("unbatched subscription got %d requests; want 100", len(sreqs))
	}
	eachOnce(t, sreqs, "s", 100)
	var rows int
	if err := st.DB().Get(&rows, `SELECT count(*) FROM attempts a JOIN deliveries d ON d.id = a.delivery_id
		WHERE d.subscription_id = $1 AND a.success`, bsub.ID); err != nil || rows != 100 {
		t.Errorf("%d successful attempt rows for the batched deliveries (%v); want 100", rows, err)
	}
}
