package eventgrid_test

import (
	"context"
	"net/http"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/hookrelay/hookrelay/devenv"
	"github.com/hookrelay/hookrelay/eventgrid"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/workflows"
)

// startTemporal runs a dev server of this test's own on dbFile.
func startTemporal(t *testing.T, dbFile string, port int) (*devenv.Temporal, client.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := devenv.StartTemporal(ctx, devenv.TemporalConfig{DBFile: dbFile, Port: port, Headless: true,
		SearchAttributes: workflows.SearchAttributes()}, testenv.Logger())
	if err != nil {
		t.Fatalf("temporal: %v", err)
	}
	c, err := client.Dial(client.Options{HostPort: srv.Address, Namespace: srv.Namespace,
		Logger: sdklog.NewStructuredLogger(testenv.Logger())})
	if err != nil {
		_ = srv.Stop()
		t.Fatal(err)
	}
	return srv, c
}

// restartRetryPolicy retries every 3 s. The endpoint circuit breaker is off:
// on a slow machine the failures before the restart pass its thresholds, and
// a disabled endpoint is probed only every 10 minutes; this test is about
// durability, not health.
const restartRetryPolicy = `{"custom":{"kind":"fixed","interval_seconds":3},"max_attempts":100,
	"health":{"disable_failure_rate":0,"disable_consecutive":0,"freeze_consecutive":0,"freeze_always_after":0}}`

// TestEdgeDeliveryAcrossRestart stops the worker and the Temporal server while
// 50 events wait for their retry, starts both again on the same SQLite file,
// and expects every event delivered (docs/policies.md#eventgrid-edge: the
// original loses them; hookrelay must not).
func TestEdgeDeliveryAcrossRestart(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	var failing atomic.Bool
	failing.Store(true)
	recv := newReceiver(t, func(int) int {
		if failing.Load() {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	ctx := context.Background()
	sub := store.Subscription{AccountID: "acct_default", URL: recv.URL, EventTypes: []string{"r.evt"},
		Policy: "custom", Active: true, RetryPolicy: store.RawJSON(restartRetryPolicy),
		Options: eventgrid.Options(eventgrid.Settings{Mode: eventgrid.ModeEdge, Schema: eventgrid.SchemaEventGrid, Validation: eventgrid.ValidationNone})}
	if err := st.CreateSubscription(ctx, &sub); err != nil {
		t.Fatal(err)
	}
	dbFile := filepath.Join(t.TempDir(), "temporal.db")
	port, err := devenv.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	srv, c := startTemporal(t, dbFile, port)
	stopWorker := runWorker(t, c, st)
	s := testenv.Starter(t, c, st)
	for i := 0; i < 50; i++ {
		res, err := st.Publish(ctx, store.Event{AccountID: "acct_default", ExternalID: "r-" + itoa(i), Type: "r.evt", Data: store.RawJSON(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(ctx, res.Deliveries); err != nil {
			t.Fatal(err)
		}
	}
	waitStatus(t, st, sub.ID, "retrying", 50)
	stopWorker()
	c.Close()
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	failing.Store(false)
	srv2, c2 := startTemporal(t, dbFile, port)
	t.Cleanup(func() { c2.Close(); _ = srv2.Stop() })
	runWorker(t, c2, st)
	waitDelivered(t, st, sub.ID, 50, 5*time.Minute)
	ok := map[string]bool{}
	for _, q := range recv.requests() {
		if q.Status == http.StatusOK {
			for _, e := range q.Events {
				id, _ := e["id"].(string)
				ok[id] = true
			}
		}
	}
	for i := 0; i < 50; i++ {
		if !ok["r-"+itoa(i)] {
			t.Errorf("event r-%d never reached the receiver after the restart", i)
		}
	}
}

// waitStatus waits until n deliveries of sub have this status.
func waitStatus(t *testing.T, st *store.Store, subID, status string, n int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		var got int
		if err := st.DB().Get(&got, `SELECT count(*) FROM deliveries WHERE subscription_id = $1 AND status = $2`, subID, status); err != nil {
			t.Fatal(err)
		}
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d deliveries %s", got, n, status)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
