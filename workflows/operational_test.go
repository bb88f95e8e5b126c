package workflows_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/hookrelay/hookrelay/activities"
	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/workflows"
)

// opsReceiver counts the operational events it receives, by type.
type opsReceiver struct {
	*httptest.Server
	mu  sync.Mutex
	got map[string]int
}

func newOpsReceiver(t *testing.T) *opsReceiver {
	r := &opsReceiver{got: map[string]int{}}
	r.Server = httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.got[req.Header.Get("X-Hookrelay-Event-Type")]++
		r.mu.Unlock()
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *opsReceiver) count(typ string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.got[typ]
}

// TestOperationalEvents: issue 15, with the real servers and worker. A
// subscriber of the operational event types receives exactly one
// hookrelay.endpoint.disabled when an endpoint is disabled by its failures,
// one .frozen when it freezes, one .enabled when an operator unfreezes it,
// and one hookrelay.delivery.dead_lettered for a workfront dead letter,
// however often the ending is recorded.
func TestOperationalEvents(t *testing.T) {
	t.Parallel()
	l := newLiveEnv(t)
	ops := newOpsReceiver(t)
	types := []string{store.EventEndpointDisabled, store.EventEndpointFrozen, store.EventEndpointEnabled, store.EventDeliveryDeadLettered}
	opsSub := store.Subscription{AccountID: store.DefaultAccount, URL: ops.URL + "/ops", EventTypes: types,
		Policy: policies.NameCustom, RetryPolicy: store.RawJSON(`{"custom":{"kind":"fixed","interval_seconds":1}}`), Active: true}
	if err := l.st.CreateSubscription(context.Background(), &opsSub); err != nil {
		t.Fatal(err)
	}
	recv := newSwitchReceiver(t)
	sub := l.subscribe(t, recv.URL+"/ops-freeze", `{"custom":{"kind":"fixed","interval_seconds":1},"max_attempts":100,
		"health":{"disable_consecutive":2,"freeze_always_after":4,"probe_interval_seconds":2}}`)
	l.publish(t, sub)
	l.publish(t, sub)
	eventually(t, "frozen", func() bool { return l.endpointState(t, sub.EndpointID) == policies.StateFrozen })
	recv.healthy.Store(true)
	srv := testenv.TemporalServer(t)
	out, err := exec.Command(filepath.Join(repoRoot(t), "bin", "temporal"), "workflow", "signal",
		"--workflow-id", workflows.EndpointWorkflowID(sub.EndpointID), "--name", "unfreeze",
		"--address", srv.Address, "--namespace", srv.Namespace).CombinedOutput()
	if err != nil {
		t.Fatalf("temporal workflow signal: %v\n%s", err, out)
	}
	eventually(t, "enabled", func() bool { return l.endpointState(t, sub.EndpointID) == policies.StateEnabled })
	deadLetterUnderWorkfront(t, l)
	eventually(t, "four operational events", func() bool {
		return ops.count(store.EventEndpointDisabled)+ops.count(store.EventEndpointFrozen)+
			ops.count(store.EventEndpointEnabled)+ops.count(store.EventDeliveryDeadLettered) >= 4
	})
	for _, typ := range types {
		if n := ops.count(typ); n != 1 {
			t.Errorf("%s received %d times, want 1", typ, n)
		}
	}
}

// deadLetterUnderWorkfront ends a workfront delivery dead-lettered through
// the Finish activity (as the Delivery workflow does after 48 hours), twice,
// as a retried activity would.
func deadLetterUnderWorkfront(t *testing.T, l *liveEnv) {
	t.Helper()
	ctx := context.Background()
	sub := store.Subscription{AccountID: store.DefaultAccount, URL: "http://127.0.0.1:1/wf", EventTypes: []string{"wf.dead"},
		Policy: policies.NameWorkfront, RetryPolicy: store.RawJSON(`{}`), Active: true}
	if err := l.st.CreateSubscription(ctx, &sub); err != nil {
		t.Fatal(err)
	}
	pub, err := l.st.Publish(ctx, store.Event{AccountID: store.DefaultAccount, Type: "wf.dead", Data: store.RawJSON(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	acts := activities.New(l.st, testenv.Logger(), testenv.Egress())
	acts.StartDeliveries = l.starter.Start
	for range 2 {
		_, err := acts.Finish(ctx, workflows.FinishInput{DeliveryID: pub.Deliveries[0].ID,
			Status: policies.StatusDeadLettered, Reason: "MaxDeliveryAttemptsExceeded", LastStatus: 500})
		if err != nil {
			t.Fatal(err)
		}
	}
}
